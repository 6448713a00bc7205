// `--shard I/K` runs and their merge: the items of every Deal recorded to a file and replayed.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim/dist/dist.h"

namespace ltsim::dist {
namespace {

namespace fs = std::filesystem;
constexpr const char* kMagic = "ltsim-shard\n";
constexpr int kVersion = 1;

bool ParseCount(const std::string& text, std::uint64_t& value) {
  if (text.empty() || text.size() > 18) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  value = std::stoull(text);
  return true;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

Shard ParseShard(const std::string& text) {
  const std::size_t slash = text.find('/');
  Shard s;
  if (slash == std::string::npos || !ParseCount(text.substr(0, slash), s.index) ||
      !ParseCount(text.substr(slash + 1), s.count) || s.count < 1 || s.index >= s.count)
    throw OptionError("shard", "expected I/K with 0 ≤ I < K (e.g. 0/4), not '" + text + "'");
  return s;
}

ShardWriter::ShardWriter(Shard shard, std::vector<std::string> command)
    : shard_(shard), command_(std::move(command)) {}

DealReport ShardWriter::Deal(std::uint64_t begin, std::uint64_t end, std::uint64_t,
                             const ChunkCompute& compute, const ItemConsume&, const StopFn& stop) {
  LTSIM_CHECK(begin <= end);
  const auto deal = static_cast<std::uint32_t>(deals_.size());
  deals_.push_back({begin, end});
  DealReport report;
  const std::uint64_t blocks = 8 * shard_.count;
  const std::uint64_t chunk = std::max<std::uint64_t>(1, (end - begin + blocks - 1) / blocks);
  for (std::uint64_t c = shard_.index; c < blocks; c += shard_.count) {
    const std::uint64_t b = begin + c * chunk;
    if (b >= end) break;
    if (stop && stop()) {
      stopped_ = report.stopped = true;
      return report;
    }
    const std::uint64_t e = std::min(end, b + chunk);
    std::vector<std::string> items = compute(b, e);
    LTSIM_CHECK(items.size() == e - b);
    for (std::uint64_t i = b; i < e; ++i) records_.push_back({deal, i, std::move(items[i - b])});
  }
  return report;
}

void ShardWriter::Write(const std::string& path) const {
  if (stopped_) throw InputError(path + ": the shard was interrupted; run it again");
  nlohmann::json header;
  header["format"] = "ltsim-shard";
  header["version"] = kVersion;
  header["shard"] = shard_.index;
  header["shards"] = shard_.count;
  header["command"] = command_;
  header["deals"] = nlohmann::json::array();
  for (const DealRange& d : deals_) header["deals"].push_back({{"begin", d.begin}, {"end", d.end}});
  ByteWriter w;
  w.PutString(header.dump());
  w.Put<std::uint64_t>(records_.size());
  for (const Record& r : records_) {
    w.Put(r.deal);
    w.Put(r.index);
    w.PutString(r.bytes);
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << kMagic << w.bytes();
    if (!out) throw InputError(path + ": cannot write the shard file");
  }
  std::error_code error;
  fs::rename(tmp, path, error);
  if (error) throw InputError(path + ": cannot write the shard file (" + error.message() + ")");
}

ShardReplay::ShardReplay(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InputError("merge: no shard files given");
  std::set<std::uint64_t> seen;
  std::uint64_t shards = 0;
  nlohmann::json first_deals;
  for (const std::string& path : paths) {
    const std::string text = ReadFile(path);
    const std::string magic = kMagic;
    if (text.compare(0, magic.size(), magic) != 0)
      throw InputError(path + ": not an ltsim shard file (as a sharded run writes them)");
    const std::string body = text.substr(magic.size());
    ByteReader r(body, path);
    nlohmann::json header;
    try {
      header = nlohmann::json::parse(r.GetString());
      if (!header.is_object()) throw InputError(path + ": header: not an object");
    } catch (const nlohmann::json::exception&) {
      throw InputError(path + ": header: invalid JSON");
    }
    if (header.value("format", "") != "ltsim-shard" || header.value("version", 0) != kVersion)
      throw InputError(path + ": format: expected ltsim-shard version 1");
    std::uint64_t index = 0, count = 0;
    std::vector<std::string> command;
    try {
      index = header.at("shard").get<std::uint64_t>();
      count = header.at("shards").get<std::uint64_t>();
      command = header.at("command").get<std::vector<std::string>>();
      for (const auto& d : header.at("deals"))
        if (d.at("end").get<std::uint64_t>() < d.at("begin").get<std::uint64_t>())
          throw InputError(path + ": deals: bad range");
    } catch (const nlohmann::json::exception& e) {
      throw InputError(path + ": header: " + e.what());
    }
    if (count < 1 || index >= count) throw InputError(path + ": shard: must be < shards");
    if (seen.empty()) {
      shards = count;
      command_ = command;
      first_deals = header.at("deals");
      for (const auto& d : first_deals) {
        DealItems items;
        items.begin = d.at("begin");
        items.end = d.at("end");
        deals_.push_back(std::move(items));
      }
    } else if (count != shards || command != command_ || header.at("deals") != first_deals) {
      throw InputError(path +
                       ": shard of another run (its command line, shard count or items "
                       "differ from " +
                       paths.front() + ")");
    }
    if (!seen.insert(index).second)
      throw InputError(path + ": shard " + std::to_string(index) + " given twice");
    const auto records = r.Get<std::uint64_t>();
    for (std::uint64_t k = 0; k < records; ++k) {
      const auto deal = r.Get<std::uint32_t>();
      const auto i = r.Get<std::uint64_t>();
      if (deal >= deals_.size() || i < deals_[deal].begin || i >= deals_[deal].end)
        throw InputError(path + ": item " + std::to_string(i) + " outside its deal");
      DealItems& d = deals_[deal];
      if (!d.items.emplace(i, r.GetString()).second)
        throw InputError(path + ": item " + std::to_string(i) + " recorded twice");
    }
  }
  if (seen.size() != shards)
    throw InputError("merge: " + std::to_string(seen.size()) + " of " + std::to_string(shards) +
                     " shards given (every shard 0 … K−1 is needed once)");
}

DealReport ShardReplay::Deal(std::uint64_t begin, std::uint64_t end, std::uint64_t,
                             const ChunkCompute&, const ItemConsume& consume, const StopFn&) {
  if (next_deal_ >= deals_.size() || deals_[next_deal_].begin != begin ||
      deals_[next_deal_].end != end)
    throw InputError(
        "merge: the command asks for items the shards did not record (run the "
        "shards again with this version of ltsim)");
  DealItems& d = deals_[next_deal_++];
  DealReport report;
  for (std::uint64_t i = begin; i < end; ++i) {
    auto it = d.items.find(i);
    if (it == d.items.end())
      throw InputError("merge: item " + std::to_string(i) + " is missing from the shards");
    ++report.consumed;
    const bool more = consume(i, std::move(it->second));
    d.items.erase(it);
    if (!more) break;
  }
  return report;
}

}  // namespace ltsim::dist
