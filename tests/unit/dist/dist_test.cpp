// The dealers of one process: local order and stop, shards written and replayed, bad shard files.
#include "ltsim/dist/dist.h"

#include <gtest/gtest.h>

#include <fstream>

#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim_test/temp_dir_test.h"

namespace ltsim::dist {
namespace {

// Item i's bytes: i and i² in exact bytes.
std::vector<std::string> Squares(std::uint64_t begin, std::uint64_t end) {
  std::vector<std::string> out;
  for (std::uint64_t i = begin; i < end; ++i) {
    ByteWriter w;
    w.Put(i);
    w.Put(static_cast<double>(i) * static_cast<double>(i));
    out.push_back(w.Take());
  }
  return out;
}

// What a reducer sees: the indices in the order they came and each item's decoded i.
struct Seen {
  std::vector<std::uint64_t> order;
  bool operator==(const Seen&) const = default;
};

ItemConsume Collect(Seen& seen, std::uint64_t stop_after = ~std::uint64_t{0}) {
  return [&seen, stop_after](std::uint64_t i, std::string&& bytes) {
    ByteReader r(bytes);
    EXPECT_EQ(r.Get<std::uint64_t>(), i);
    EXPECT_EQ(r.Get<double>(), static_cast<double>(i) * static_cast<double>(i));
    EXPECT_TRUE(r.done());
    seen.order.push_back(i);
    return i + 1 < stop_after;
  };
}

std::vector<std::uint64_t> Range(std::uint64_t b, std::uint64_t e) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = b; i < e; ++i) v.push_back(i);
  return v;
}

TEST(LocalDealer, ConsumesEveryItemInOrderAndStopsWhenTheConsumerIsDone) {
  Seen all, some;
  const DealReport r = LocalDealer().Deal(5, 105, 7, Squares, Collect(all));
  EXPECT_EQ(all.order, Range(5, 105));
  EXPECT_EQ(r.consumed, 100u);
  EXPECT_FALSE(r.stopped);
  LocalDealer().Deal(0, 100, 7, Squares, Collect(some, 30));
  EXPECT_EQ(some.order, Range(0, 30));
}

TEST(LocalDealer, AStopFlagEndsBetweenChunks) {
  bool stop = false;
  Seen seen;
  int chunks = 0;
  auto compute = [&](std::uint64_t b, std::uint64_t e) {
    if (++chunks == 3) stop = true;  // set while the third chunk computes
    return Squares(b, e);
  };
  const DealReport r = LocalDealer().Deal(0, 100, 10, compute, Collect(seen), [&] { return stop; });
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(seen.order, Range(0, 30));  // the third chunk was finished, so it is consumed
}

TEST(ParseShard, AcceptsIOverKAndNamesTheFlagOtherwise) {
  const Shard s = ParseShard("2/5");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 5u);
  for (const char* bad : {"5/5", "1", "a/3", "-1/3", "1/0", "", "1/3x", "/3"}) {
    try {
      ParseShard(bad);
      ADD_FAILURE() << bad;
    } catch (const OptionError& e) {  // keyed by the option; the command line names --shard
      EXPECT_EQ(e.option(), "shard") << e.what();
    }
  }
}

class ShardTest : public test::TempDirTest {
 protected:
  ShardTest() : TempDirTest("shard") {}

  // Runs K shards of two deals ([0, n) and [3, m)) and returns their files.
  std::vector<std::string> WriteShards(std::uint64_t k, std::uint64_t n, std::uint64_t m) {
    std::vector<std::string> paths;
    for (std::uint64_t i = 0; i < k; ++i) {
      ShardWriter w({i, k}, {"fuzz", "--seed", "3"});
      EXPECT_FALSE(w.Reduces());
      Seen none;
      w.Deal(0, n, 4, Squares, Collect(none));
      w.Deal(3, m, 4, Squares, Collect(none));
      EXPECT_TRUE(none.order.empty());  // a shard consumes nothing
      paths.push_back(Path("s" + std::to_string(i)));
      w.Write(paths.back());
    }
    return paths;
  }
};

TEST_F(ShardTest, MergedShardsReplayExactlyWhatOneProcessConsumes) {
  for (std::uint64_t k : {1, 2, 3, 7}) {
    for (std::uint64_t n : {0, 1, 5, 100}) {
      const std::vector<std::string> paths = WriteShards(k, n, 60);
      ShardReplay replay({paths.rbegin(), paths.rend()});  // any order of files
      EXPECT_EQ(replay.command(), (std::vector<std::string>{"fuzz", "--seed", "3"}));
      Seen first, second, local_first, local_second;
      replay.Deal(0, n, 64, Squares, Collect(first));
      replay.Deal(3, 60, 1, Squares, Collect(second));
      LocalDealer().Deal(0, n, 64, Squares, Collect(local_first));
      LocalDealer().Deal(3, 60, 64, Squares, Collect(local_second));
      EXPECT_EQ(first, local_first) << k << " " << n;
      EXPECT_EQ(second, local_second) << k << " " << n;
    }
  }
}

TEST_F(ShardTest, MissingDuplicateOrForeignShardsAreInputErrors) {
  const std::vector<std::string> paths = WriteShards(3, 50, 10);
  EXPECT_THROW(ShardReplay({paths[0], paths[2]}), InputError);            // shard 1 missing
  EXPECT_THROW(ShardReplay({paths[0], paths[1], paths[1]}), InputError);  // given twice
  ShardWriter other({1, 3}, {"fuzz", "--seed", "4"});
  other.Write(Path("other"));
  EXPECT_THROW(ShardReplay({paths[0], Path("other"), paths[2]}), InputError);
  std::ofstream(Path("junk")) << "not a shard";
  EXPECT_THROW(ShardReplay({Path("junk")}), InputError);
  // A truncated file is refused, not read past its end.
  std::ifstream in(paths[1], std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(Path("cut"), std::ios::binary) << text.substr(0, text.size() - 5);
  EXPECT_THROW(ShardReplay({paths[0], Path("cut"), paths[2]}), InputError);
  // A replay asked for other items than the shards ran.
  ShardReplay replay(paths);
  Seen seen;
  EXPECT_THROW(replay.Deal(0, 51, 1, Squares, Collect(seen)), InputError);
}

TEST_F(ShardTest, AStoppedShardIsNotWritten) {
  ShardWriter w({0, 2}, {"fuzz"});
  Seen none;
  EXPECT_TRUE(w.Deal(0, 100, 4, Squares, Collect(none), [] { return true; }).stopped);
  EXPECT_THROW(w.Write(Path("s")), InputError);
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Shard bytes are input: a change of any one bit anywhere in the file (header, counts, an
// item, its digest) is an InputError naming the file when the shards are read, never an
// internal check and never a replayed item (docs/distributed.md §4.1).
TEST_F(ShardTest, EveryBitFlipOfAShardFileIsANamedInputError) {
  const std::vector<std::string> paths = WriteShards(2, 12, 8);
  const std::string text = ReadBytes(paths[1]);
  const std::string changed = Path("changed");
  for (std::size_t at = 0; at < text.size(); ++at)
    for (int bit : {0, 5}) {
      std::string bytes = text;
      bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
      std::ofstream(changed, std::ios::binary) << bytes;
      try {
        ShardReplay replay({paths[0], changed});
        ADD_FAILURE() << "byte " << at << " bit " << bit << " accepted";
      } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(changed, 0), 0u) << e.what();
      }
    }
}

// Items whose digests match but whose bytes do not decode (a shard written by another
// program): the consumer's ByteReader reports them as input naming the file and the item.
TEST_F(ShardTest, ItemsThatDoNotDecodeAreInputErrorsNamingTheFileAndItem) {
  ShardWriter w({0, 1}, {"fuzz"});
  Seen none;
  w.Deal(
      0, 6, 4,
      [](std::uint64_t b, std::uint64_t e) { return std::vector<std::string>(e - b, "abc"); },
      Collect(none));
  w.Write(Path("short"));
  ShardReplay replay({Path("short")});
  Seen seen;
  try {
    replay.Deal(0, 6, 1, Squares, Collect(seen));
    ADD_FAILURE() << "three bytes decoded as an item";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), Path("short") + ": item 0: truncated");
  }
}

// The item a decision rests on (where the consumer stops) is recomputed by the merge and must
// be the recorded bytes: a forged item with valid digests cannot decide the result.
TEST_F(ShardTest, TheItemWhereTheConsumerStopsIsRecomputedAndMustMatch) {
  const std::vector<std::string> paths = WriteShards(2, 10, 4);
  {
    ShardReplay honest(paths);
    Seen seen;
    EXPECT_EQ(honest.Deal(0, 10, 1, Squares, Collect(seen, 4)).consumed, 4u);
  }
  // The same records against a command that computes other bytes for item 3.
  const ChunkCompute other = [](std::uint64_t b, std::uint64_t e) {
    std::vector<std::string> items = Squares(b, e);
    for (std::uint64_t i = b; i < e; ++i)
      if (i == 3) items[i - b][0] ^= 1;
    return items;
  };
  ShardReplay forged(paths);
  Seen seen;
  try {
    forged.Deal(0, 10, 1, other, Collect(seen, 4));
    ADD_FAILURE() << "a recorded decision that this process does not compute was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(": item 3: the recorded result differs"),
              std::string::npos)
        << e.what();
  }
}

// Bytes that decode but make the command fail (an error that names no shard): recomputed, and
// named as the shard's fault when this process computes other bytes; kept as they are when it
// computes the same (the failure is then the command's own).
TEST_F(ShardTest, AFailureWhileConsumingAForgedItemNamesTheShardAndItem) {
  const std::vector<std::string> paths = WriteShards(1, 6, 4);
  const ItemConsume fail_at_2 = [](std::uint64_t i, std::string&&) {
    if (i == 2) throw InputError("witness: empty string");
    return true;
  };
  const ChunkCompute other = [](std::uint64_t b, std::uint64_t e) {
    return std::vector<std::string>(e - b, "other");
  };
  try {
    ShardReplay(paths).Deal(0, 6, 1, other, fail_at_2);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(paths[0] + ": item 2: the recorded result differs", 0),
              0u)
        << e.what();
  }
  try {
    ShardReplay(paths).Deal(0, 6, 1, Squares, fail_at_2);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "witness: empty string");
  }
}

}  // namespace
}  // namespace ltsim::dist
