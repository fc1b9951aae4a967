#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <sstream>

#include "../case/fnv1a.h"
#include "../kernels/op_schema.h"
#include "../properties/catalog/property_catalog.h"

#include "cli.h"

namespace gatecheck {

std::vector<std::string> property_list(const std::string& option, const std::string& list, const OpSchema* op,
                                       std::string* problem) {
  problem->clear();
  std::vector<std::string> props = split_list(list);
  for (const auto& p : props) {
    if (!problem->empty()) break;
    if (!is_property(p)) *problem = option + ": " + unknown_property(p);
    else if (op && !applies_to(property_info(p), *op))
      *problem = option + ": " + p + " does not apply to " + op->name +
                 " (it has no output of the kinds the property reads; gatecheck ops " + op->name + ")";
  }
  if (!problem->empty()) props.clear();
  return props;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) v.push_back(item);
  return v;
}

bool parse_device(const std::string& s, int* device) {
  if (s == "cpu") { *device = 0; return true; }
  if (s == "cuda") { *device = 1; return true; }
  return false;
}

bool writable_path(const std::string& file) {
  // Opening is the test, not access(): root passes access(W_OK) on a folder such as /proc where
  // no file can be created, and the run's report would be lost at its end.
  struct stat st;
  if (stat(file.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      errno = EISDIR;
      return false;
    }
    // A FIFO's open would wait for its reader: for anything but a plain file, ask access().
    if (!S_ISREG(st.st_mode)) return access(file.c_str(), W_OK) == 0;
    const int fd = open(file.c_str(), O_WRONLY | O_CLOEXEC);  // no O_TRUNC: nothing is changed
    if (fd < 0) return false;
    close(fd);
    return true;
  }
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) {
    close(fd);
    unlink(file.c_str());
    return true;
  }
  if (errno != EEXIST) return false;
  // A link to a file not there yet: writing creates its target, so ask the link's folder.
  const auto slash = file.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
  return access(dir.c_str(), W_OK) == 0;
}

bool writable_folder(const std::string& dir) { return writable_path(dir + "/.gatecheck-write-probe"); }

void make_dirs(const std::string& path) {
  std::string cur;
  std::stringstream ss(path);
  if (!path.empty() && path[0] == '/') cur = "/";
  for (std::string part; std::getline(ss, part, '/');) {
    if (part.empty()) continue;
    cur += part + "/";
    mkdir(cur.c_str(), 0755);
  }
}

}  // namespace gatecheck
