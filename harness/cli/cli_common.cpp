#include <sstream>

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

}  // namespace gatecheck
