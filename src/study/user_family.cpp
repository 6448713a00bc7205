// Reading a user's family directory (docs/tightness.md §7).
#include "ltsim/study/user_family.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ltsim/check/sandwich.h"
#include "ltsim/core/error.h"
#include "ltsim/model/model_file.h"

namespace ltsim {
namespace {

namespace fs = std::filesystem;

nlohmann::json MetaOf(const Transformer& m) {
  if (m.meta_json.empty()) return nlohmann::json::object();
  nlohmann::json meta = nlohmann::json::parse(m.meta_json, nullptr, false);
  return meta.is_object() ? meta : nlohmann::json::object();
}

std::string Shown(const nlohmann::json& j) {
  std::string text = j.dump();
  return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

// meta.KEY, else meta.params.KEY, with the path it was found at; null when neither.
std::pair<nlohmann::json, std::string> Lookup(const nlohmann::json& meta, const std::string& key) {
  if (meta.contains(key)) return {meta.at(key), "meta." + key};
  if (meta.contains("params") && meta.at("params").is_object() && meta.at("params").contains(key))
    return {meta.at("params").at(key), "meta.params." + key};
  return {nullptr, ""};
}

// The number at meta.KEY or meta.params.KEY of f (else g); InputError naming the file and key.
double ReadNumber(const UserFamilyMember& m, const std::string& key, const std::string& why) {
  for (const auto* model : {&m.f, &m.g}) {
    const auto [value, path] = Lookup(MetaOf(*model), key);
    if (path.empty()) continue;
    const std::string& file = model == &m.f ? m.f_file : m.g_file;
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      throw InputError(fmt::format("{}: {}: expected a number, got {}", file, path, Shown(value)));
    return value.get<double>();
  }
  throw InputError(
      fmt::format("{}: meta has no '{}' (nor meta.params.{}){}", m.f_file, key, key, why));
}

}  // namespace

UserFamily ReadUserFamily(const UserFamilyOptions& o) {
  UserFamily family;
  family.dir = o.dir;
  std::error_code error;
  if (!fs::is_directory(o.dir, error))
    throw InputError(o.dir +
                     ": not a directory (a family directory holds one subdirectory a "
                     "member, each with f.json and g.json)");
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(o.dir, error)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
    if (names.size() > kMaxFamilyMembers)
      throw InputError(
          fmt::format("{}: more than {} member directories", o.dir, kMaxFamilyMembers));
  }
  if (error) throw InputError(o.dir + ": " + error.message());
  if (names.empty())
    throw InputError(o.dir +
                     ": no member directories (each member is a subdirectory with "
                     "f.json and g.json)");
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    UserFamilyMember m;
    m.name = name;
    const fs::path dir = fs::path(o.dir) / name;
    m.f_file = (dir / "f.json").string();
    m.g_file = (dir / "g.json").string();
    for (const std::string& file : {m.f_file, m.g_file})
      if (!fs::is_regular_file(file, error))
        throw InputError(fmt::format("{}: missing {} (a member is f.json and g.json)", dir.string(),
                                     fs::path(file).filename().string()));
    m.f = ReadModel(m.f_file);
    m.g = ReadModel(m.g_file);
    CheckPair(m.f, m.g, m.f_file, m.g_file);
    if (o.eps > 0) {
      m.eps = o.eps;
    } else {
      m.eps = ReadNumber(m, "eps", "; give --eps");
      if (!(m.eps > 0))
        throw InputError(fmt::format("{}: meta.eps: must be positive, got {}", m.f_file, m.eps));
    }
    const auto [recorded, path] = Lookup(MetaOf(m.f), "first_disagreement");
    if (!path.empty()) {
      if (!recorded.is_number_unsigned() || recorded.get<std::uint64_t>() < 1)
        throw InputError(fmt::format("{}: {}: expected a positive integer, got {}", m.f_file, path,
                                     Shown(recorded)));
      m.recorded_first_disagreement = recorded.get<std::uint64_t>();
    }
    family.members.push_back(std::move(m));
  }
  if (!o.need_parameter) return family;
  family.parameter = o.parameter;
  if (family.parameter.empty()) {
    // The default: the one numeric key of meta.params that differs between members.
    std::map<std::string, std::set<double>> values;
    std::set<std::string> keys;
    for (const UserFamilyMember& m : family.members) {
      const nlohmann::json meta = MetaOf(m.f);
      if (!meta.contains("params") || !meta.at("params").is_object()) continue;
      for (const auto& [key, value] : meta.at("params").items()) {
        keys.insert(key);
        if (value.is_number()) values[key].insert(value.get<double>());
      }
    }
    std::vector<std::string> varying;
    for (const auto& [key, set] : values)
      if (set.size() > 1) varying.push_back(key);
    if (varying.size() != 1)
      throw InputError(fmt::format(
          "{}: --parameter: name the meta key to fit in ({} of the members' meta.params vary{}{})",
          o.dir, varying.size(), varying.empty() ? "" : ": ",
          fmt::format("{}", fmt::join(varying, ", "))));
    family.parameter = varying.front();
  }
  for (UserFamilyMember& m : family.members) m.value = ReadNumber(m, family.parameter, "");
  return family;
}

RefuteFamilyResult RunRefuteFamily(const RefuteFamilyOptions& o) {
  ValidateRefuteBound(o.refute.bound);
  UserFamilyOptions read;
  read.dir = o.dir;
  read.need_parameter = false;
  read.eps = o.refute.search.eps;
  const UserFamily family = ReadUserFamily(read);
  RefuteFamilyResult result;
  result.options = o;
  result.members.resize(family.members.size());
  const int threads = o.refute.search.threads > 0 ? o.refute.search.threads
                                                  : oneapi::tbb::this_task_arena::max_concurrency();
  oneapi::tbb::task_arena arena(threads);
  arena.execute([&] {
    oneapi::tbb::parallel_for(std::size_t{0}, family.members.size(), [&](std::size_t k) {
      const UserFamilyMember& m = family.members[k];
      RefuteOptions member = o.refute;
      member.search.eps = m.eps;
      RefuteFamilyMember& r = result.members[k];
      r.name = m.name;
      r.f_file = m.f_file;
      r.g_file = m.g_file;
      r.recorded_first_disagreement = m.recorded_first_disagreement;
      r.result =
          JudgeGivenPair(member, m.f, m.g, "user family member " + m.name, m.f_file, m.g_file);
    });
  });
  // The best: a refuting member first, then by T*/bound (NaN last), the first by name on ties.
  const auto key = [](const RefuteResult& r) {
    return std::pair<int, double>(r.refuted ? 1 : 0,
                                  std::isnan(r.best.ratio) ? -1.0 : r.best.ratio);
  };
  for (std::size_t k = 0; k < result.members.size(); ++k) {
    const RefuteResult& r = result.members[k].result;
    result.refuted = result.refuted || r.refuted;
    if (!r.limited_by.empty()) result.limited.push_back(result.members[k].name);
    if (key(r) > key(result.members[result.best].result)) result.best = static_cast<int>(k);
  }
  return result;
}

}  // namespace ltsim
