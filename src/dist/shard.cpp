// `--shard I/K` runs and their merge: the items of every Deal recorded to a file and replayed.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "ltsim/core/bytes.h"
#include "ltsim/core/digest.h"
#include "ltsim/core/error.h"
#include "ltsim/core/item_error.h"
#include "ltsim/dist/dist.h"
#include "ltsim/io/json.h"
#include "ltsim/io/output_file.h"

namespace ltsim::dist {
namespace {

namespace fs = std::filesystem;
constexpr const char* kMagic = "ltsim-shard\n";
constexpr int kVersion = 2;  // 2: a digest per item and one of the whole file
constexpr const char* kDigestName = "ltsim-digest64";
// Far more items than any shard holds: a count read from a file is checked before use.
constexpr std::uint64_t kMaxShardRecords = std::uint64_t{1} << 40;

// The digest of one item, bound to its shard's header (the command line, shard index and
// deal ranges) through `bound`, the header's digest (docs/distributed.md §4.1).
std::uint64_t ItemDigest(std::uint64_t bound, std::uint32_t deal, std::uint64_t index,
                         const std::string& bytes) {
  Digest64 d(bound);
  d.Update(&deal, sizeof deal);
  d.Update(&index, sizeof index);
  d.Update(bytes);
  return d.value();
}

bool ParseCount(const std::string& text, std::uint64_t& value) {
  if (text.empty() || text.size() > 18) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  value = std::stoull(text);
  return true;
}

std::string ReadFile(const std::string& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) throw InputError(path + ": is a directory, not a shard file");
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
    // A stop during the chunk may have left some of its items undone: the shard is not whole.
    if (stop && stop()) {
      stopped_ = report.stopped = true;
      return report;
    }
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
  header["digest"] = kDigestName;
  const std::string header_text = header.dump();
  ByteWriter w;
  w.PutString(header_text);
  w.Put<std::uint64_t>(records_.size());
  const std::uint64_t bound = DigestOf(header_text);
  for (const Record& r : records_) {
    w.Put(r.deal);
    w.Put(r.index);
    w.PutString(r.bytes);
    w.Put(ItemDigest(bound, r.deal, r.index, r.bytes));
  }
  w.Put(DigestOf(w.bytes()));
  // Complete or absent, never through a symbolic link (io/output_file.h).
  io::AtomicFile out(path);
  out.stream() << kMagic << w.bytes();
  out.Commit();
}

ShardReplay::ShardReplay(const std::vector<std::string>& paths) : paths_(paths) {
  if (paths.empty()) throw InputError("merge: no shard files given");
  std::set<std::uint64_t> seen;
  std::uint64_t shards = 0;
  for (std::size_t file = 0; file < paths.size(); ++file) {
    const std::string& path = paths[file];
    const std::string text = ReadFile(path);
    const std::string magic = kMagic;
    if (text.compare(0, magic.size(), magic) != 0)
      throw InputError(path + ": not an ltsim shard file (as a sharded run writes them)");
    const std::string body = text.substr(magic.size());
    // The whole file's digest first: a byte changed anywhere is named before anything is
    // decoded (the per-item digests then say which item).
    if (body.size() < sizeof(std::uint64_t)) throw InputError(path + ": truncated");
    const std::string payload = body.substr(0, body.size() - sizeof(std::uint64_t));
    ByteReader r(body, path);
    nlohmann::json header;
    const std::string header_text = r.GetString();
    try {
      // The strict JSON layer's limits (depth, size) for a header read from a file.
      const io::Json parsed = io::ParseJson(header_text, path + ": header");
      header = nlohmann::json::parse(parsed.dump());
      if (!header.is_object()) throw InputError(path + ": header: not an object");
    } catch (const nlohmann::json::exception&) {
      throw InputError(path + ": header: invalid JSON");
    }
    if (header.value("format", "") != "ltsim-shard")
      throw InputError(path + ": format: expected ltsim-shard");
    if (header.value("version", 0) != kVersion)
      throw InputError(path + ": version: expected ltsim-shard version " +
                       std::to_string(kVersion) + " (run the shards again with this ltsim)");
    std::uint64_t stored = 0;
    std::memcpy(&stored, body.data() + payload.size(), sizeof stored);
    if (header.value("digest", "") != kDigestName || stored != DigestOf(payload))
      throw InputError(path +
                       ": digest: the file's bytes differ from what the shard wrote (a "
                       "corrupted or edited shard file; run the shard again)");
    std::uint64_t index = 0, count = 0;
    std::vector<std::string> command;
    try {
      index = header.at("shard").get<std::uint64_t>();
      count = header.at("shards").get<std::uint64_t>();
      command = header.at("command").get<std::vector<std::string>>();
      if (!header.at("deals").is_array()) throw InputError(path + ": deals: not an array");
      for (const auto& d : header.at("deals"))
        if (d.at("end").get<std::uint64_t>() < d.at("begin").get<std::uint64_t>())
          throw InputError(path + ": deals: bad range");
    } catch (const nlohmann::json::exception&) {
      throw InputError(path + ": header: malformed (shard, shards, command or deals)");
    }
    if (count < 1 || index >= count) throw InputError(path + ": shard: must be < shards");
    // Every shard makes the same Deals, but a shard whose command stops on its own results
    // (a pruned threshold, docs/distributed.md §4.2) may stop before another: the ranges must
    // agree as far as both go.
    const nlohmann::json& deals = header.at("deals");
    bool same_deals = true;
    for (std::size_t k = 0; k < deals.size() && k < deals_.size(); ++k)
      same_deals = same_deals && deals[k].at("begin").get<std::uint64_t>() == deals_[k].begin &&
                   deals[k].at("end").get<std::uint64_t>() == deals_[k].end;
    if (seen.empty()) {
      shards = count;
      command_ = command;
    } else if (count != shards || command != command_ || !same_deals) {
      throw InputError(path +
                       ": shard of another run (its command line, shard count or items "
                       "differ from " +
                       paths.front() + ")");
    }
    for (std::size_t k = deals_.size(); k < deals.size(); ++k) {
      DealItems items;
      items.begin = deals[k].at("begin").get<std::uint64_t>();
      items.end = deals[k].at("end").get<std::uint64_t>();
      deals_.push_back(std::move(items));
    }
    if (!seen.insert(index).second)
      throw InputError(path + ": shard " + std::to_string(index) + " given twice");
    const std::uint64_t bound = DigestOf(header_text);
    const auto records = r.Get<std::uint64_t>();
    if (records > kMaxShardRecords) throw InputError(path + ": record count out of range");
    for (std::uint64_t k = 0; k < records; ++k) {
      const auto deal = r.Get<std::uint32_t>();
      const auto i = r.Get<std::uint64_t>();
      const std::string where = path + ": item " + std::to_string(i);
      if (deal >= deals.size() || i < deals_[deal].begin || i >= deals_[deal].end)
        throw InputError(where + " outside its deal");
      std::string bytes = r.GetString();
      if (r.Get<std::uint64_t>() != ItemDigest(bound, deal, i, bytes))
        throw InputError(where + ": digest differs (a corrupted or edited item)");
      DealItems& d = deals_[deal];
      if (!d.items.emplace(i, Item{std::move(bytes), file}).second)
        throw InputError(where + " recorded twice");
    }
    r.Get<std::uint64_t>();  // the file's digest, checked above
    if (!r.done()) throw InputError(path + ": trailing bytes after the last item");
  }
  if (seen.size() != shards)
    throw InputError("merge: " + std::to_string(seen.size()) + " of " + std::to_string(shards) +
                     " shards given (every shard 0 … K−1 is needed once)");
}

DealReport ShardReplay::Deal(std::uint64_t begin, std::uint64_t end, std::uint64_t,
                             const ChunkCompute& compute, const ItemConsume& consume,
                             const StopFn&) {
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
    const std::string where = paths_[it->second.file] + ": item " + std::to_string(i);
    // A decision the merge reports rests on this item when the command stops here (a first
    // disagreement): it is recomputed and must be the recorded bytes, so a forged item cannot
    // decide the result (docs/distributed.md §4.1).
    const std::string recorded = it->second.bytes;
    const auto recompute = [&] {
      std::vector<std::string> again = compute(i, i + 1);
      if (again.size() != 1 || again[0] != recorded)
        throw InputError(where +
                         ": the recorded result differs from the one this command computes "
                         "(a forged or corrupted shard; run the shard again)");
    };
    bool more = false;
    try {
      // Malformed bytes are this file's fault: InputErrors naming it (core/bytes.h).
      ScopedByteOrigin origin(where);
      more = consume(i, std::move(it->second.bytes));
    } catch (const InputError& error) {
      // Bytes that decode but that the command cannot use (an error that names no shard):
      // when this process computes other bytes, the shard is at fault and is named.
      if (std::string(error.what()).starts_with(where)) throw;
      recompute();
      throw;
    }
    d.items.erase(it);
    if (!more) {
      recompute();
      break;
    }
  }
  return report;
}

}  // namespace ltsim::dist
