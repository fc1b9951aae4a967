// file_safe: the implementation's part of a saved case's name. A long label keeps its tail (a
// plugin's or module's file name), starting at a word, and a hash of the whole label.
#include <gtest/gtest.h>

#include <string>

#include "findings/failure_files.h"

namespace {

TEST(FileSafe, ShortLabelsStayAsTheyAre) {
  EXPECT_EQ(gatecheck::file_safe("host"), "host");
  EXPECT_EQ(gatecheck::file_safe("torch-eager@cuda"), "torch-eager_cuda");
}

TEST(FileSafe, ALongLabelKeepsItsTailFromAWordOn) {
  const std::string n = gatecheck::file_safe("plugin:build/examples/libgatecheck_broken_plugin.so");
  // the last 40 characters were "d_examples_...": "build" cut to its last letter
  EXPECT_EQ(n.substr(0, n.size() - 9), "examples_libgatecheck_broken_plugin_so");
  EXPECT_EQ(n.size() - 9, std::string("examples_libgatecheck_broken_plugin_so").size());
  // a tail that already starts at a word keeps it
  const std::string m = gatecheck::file_safe("plugin:/tmp/ab/libabcdefghijklmnopqrstuvwxyzabcdefgh.so");
  EXPECT_EQ(m.substr(0, m.size() - 9), "libabcdefghijklmnopqrstuvwxyzabcdefgh_so");
}

TEST(FileSafe, LabelsThatShareATailStayApart) {
  const std::string a = gatecheck::file_safe("plugin:/one/place/for/the/library/libgatecheck_kernel.so");
  const std::string b = gatecheck::file_safe("plugin:/another/place/for/the/library/libgatecheck_kernel.so");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.substr(0, a.size() - 9), b.substr(0, b.size() - 9));
}

}  // namespace
