// shell_quote: what the printed repro command holds is the path itself, once a shell has read it.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "findings/repro_command.h"

namespace {

// What `sh -c "printf %s <quoted>"` prints: the word the shell made of it.
std::string as_the_shell_reads(const std::string& quoted) {
  const std::string cmd = "printf %s " + quoted;
  FILE* p = popen(("sh -c " + gatecheck::shell_quote(cmd)).c_str(), "r");
  if (!p) return "<popen failed>";
  std::string out;
  char buf[256];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(ShellQuote, PlainPathsStayAsTheyAre) {
  EXPECT_EQ(gatecheck::shell_quote("corpus/found/host-accuracy-1d82dfe8f0d27665.json"),
            "corpus/found/host-accuracy-1d82dfe8f0d27665.json");
  EXPECT_EQ(gatecheck::shell_quote("python:gatecheck.peers:diffusers_eager"), "python:gatecheck.peers:diffusers_eager");
}

TEST(ShellQuote, EveryOtherPathReachesTheCommandWhole) {
  for (const std::string s : {"run(1)/x.json", "a;b", "a&b|c", "*.json", "it's", "a b", "$HOME", "back\\slash",
                              "q\"uote", "~user", "a#b", "<in>", "`x`", "!bang", "tab\tx", "{a,b}", "[ab]", ""}) {
    EXPECT_EQ(as_the_shell_reads(gatecheck::shell_quote(s)), s) << "quoted as " << gatecheck::shell_quote(s);
  }
}

}  // namespace
