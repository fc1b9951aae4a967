#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <sstream>

#include "../case/fnv1a.h"

#include "cli.h"

namespace gatecheck {

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
  if (access(file.c_str(), F_OK) == 0) return access(file.c_str(), W_OK) == 0;
  const auto slash = file.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
  return access(dir.c_str(), W_OK) == 0;
}

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
