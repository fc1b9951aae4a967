// Which row of a prior-art report an implementation stands beside, by its
// spec: the project's kernels (cuda, and the project's LibTorch op as users
// call it: a gatecheck.peers peer named *gatecheck_op) or torch eager
// (torch-eager, and diffusers' composition from Python: a peer named
// diffusers_eager or *_diffusers). A peer pairs the same whether named
// through gatecheck.peers or the module that defines it
// (python:gatecheck.peers_rmsnorm_modulate:NAME); anything else
// (torch.compile, host, a plugin) has no row of theirs.
#pragma once

#include <string>

namespace gatecheck {

enum class PeerRole { none, kernels, eager };

inline PeerRole peer_role(const std::string& spec) {
  if (spec == "cuda") return PeerRole::kernels;
  if (spec == "torch-eager") return PeerRole::eager;
  const std::string door = "python:gatecheck.peers";
  const size_t colon = spec.rfind(':');
  if (spec.rfind(door, 0) != 0 || colon < door.size()) return PeerRole::none;
  const std::string module = spec.substr(7, colon - 7), name = spec.substr(colon + 1);
  if (module != "gatecheck.peers" && module.rfind("gatecheck.peers_", 0) != 0) return PeerRole::none;
  auto ends = [&](const std::string& tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (ends("gatecheck_op")) return PeerRole::kernels;
  if (name == "diffusers_eager" || ends("_diffusers")) return PeerRole::eager;
  return PeerRole::none;
}

}  // namespace gatecheck
