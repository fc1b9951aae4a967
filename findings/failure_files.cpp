#include "failure_files.h"

#include <cctype>
#include <cstdio>

#include "../case/fnv1a.h"
#include "../properties/checks/properties.h"
#include "../properties/engine/scale_check.h"
#include "repro_command.h"

namespace gatecheck {

std::string file_safe(const std::string& s) {
  std::string o;
  for (char ch : s) o += (isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_') ? ch : '_';
  if (o.size() <= 40) return o;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", unsigned(fnv1a(s) & 0xffffffffu));
  // The tail names a plugin or module best (its file's name); it starts at a word, not inside one
  // ("examples_libx_so", not "d_examples_libx_so"), and the hash of the whole keeps it unique.
  std::string tail = o.substr(o.size() - 40);
  if (const auto cut = tail.find('_'); cut != std::string::npos && cut + 1 < tail.size() && o[o.size() - 41] != '_')
    tail = tail.substr(cut + 1);
  return tail + "_" + hex;
}

std::string failure_file_path(const std::string& corpus, const std::string& prefix, const std::string& impl,
                              const std::string& property, const std::string& digest) {
  return corpus + "/" + prefix + file_safe(impl) + "-" + property + "-" + digest + ".json";
}

CaseFile failure_case_file(const FailureReport& f) {
  CaseFile file;
  if (f.scale_shrunk) file.scale = ScaleFileCase{f.scale_shrunk->spec, f.scale_shrunk->view};
  else file.c = f.shrunk;
  return file;
}

std::string failure_digest(const FailureReport& f) {
  return f.scale_shrunk ? scale_digest(*f.scale_shrunk) : case_digest(f.shrunk);
}

std::string save_failure_file(const std::string& corpus, CaseFile file, const std::string& digest,
                              const FailureSource& who, const Verdict& v, const std::string& note) {
  const std::string path = failure_file_path(corpus, "", who.impl, who.property, digest);
  file.failure = FailureRecord{who.impl, device_name(who.device), who.property, v.message,
                               repro_command(path, who.impl, who.device, v), who.claimed,
                               evidence_text(v)};  // the bits seen, for a failure that may not replay
  file.note = note;
  write_case_file(path, file);
  return path;
}

SavedFailures save_failures(const CheckReport& r, const std::string& corpus, const std::string& origin,
                            const std::function<void(const std::string&)>& warn) {
  SavedFailures saved;
  saved.paths.resize(r.results.size());
  for (size_t k = 0; k < r.results.size(); ++k) {
    const auto& p = r.results[k];
    if (!p.failure) continue;
    const std::string note = "found by gatecheck check " + origin + " after " +
                             std::to_string(p.failure->seconds_to_find) + " s; shrunk in " +
                             std::to_string(p.failure->shrink_steps) + " steps" +
                             (p.failure->shrink_cut_short ? " (cut short: a smaller case may fail)" : "") + " from " +
                             describe_found_case(*p.failure);
    try {
      // values where small, the generator spec where large
      saved.paths[k] = save_failure_file(corpus, failure_case_file(*p.failure), failure_digest(*p.failure),
                                         {p.impl, p.device, p.property, p.failure->claimed}, p.failure->verdict, note);
    } catch (const std::exception& e) {
      warn(std::string("could not save the counterexample: ") + e.what());
    }
  }
  return saved;
}

}  // namespace gatecheck
