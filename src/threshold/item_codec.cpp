// The threshold's dealt outcomes as exact bytes (core/bytes.h), for MPI ranks and shards.
#include "threshold/item_codec.h"

#include <utility>

#include "ltsim/core/bytes.h"

namespace ltsim::threshold {

std::string OutcomeBytes(const LengthOutcome& o, std::uint64_t evaluations) {
  ByteWriter w;
  w.Put(o.max_gap);
  w.Put(o.disagrees);
  w.Put(o.witness_gap);
  w.Put(evaluations);
  w.PutVector(o.argmax);
  w.Put<bool>(o.argmax_counts.has_value());
  if (o.argmax_counts) {
    const TypeCounts& c = *o.argmax_counts;
    w.Put(c.alphabet);
    w.Put(c.period);
    w.Put(c.locality);
    w.Put(c.length);
    w.PutVector(c.far);
    w.PutVector(c.suffix);
  }
  w.Put(o.precise);
  return w.Take();
}

LengthOutcome OutcomeFromBytes(const std::string& bytes, std::uint64_t& evaluations) {
  ByteReader r(bytes);
  LengthOutcome o;
  o.max_gap = r.Get<double>();
  o.disagrees = r.Get<bool>();
  o.witness_gap = r.Get<double>();
  evaluations += r.Get<std::uint64_t>();
  o.argmax = r.GetVector<Token>();
  if (r.Get<bool>()) {
    TypeCounts c;
    c.alphabet = r.Get<int>();
    c.period = r.Get<int>();
    c.locality = r.Get<int>();
    c.length = r.Get<std::uint64_t>();
    c.far = r.GetVector<std::uint64_t>();
    c.suffix = r.GetVector<Token>();
    o.argmax_counts = std::move(c);
  }
  o.precise = r.Get<std::uint64_t>();
  return o;
}

std::string TaskBytes(const TaskOutcome& o) {
  ByteWriter w;
  w.Put(o.first_T);
  w.Put(o.best_gap);
  w.PutVector(o.best_counts);
  w.Put(o.best_T);
  w.PutVector(o.evaluated);
  w.PutVector(o.pruned);
  w.PutVector(o.max_gap);
  w.Put(o.evaluations);
  w.Put(o.cells);
  w.Put(o.cells_pruned);
  w.Put(o.max_pruned_bound);
  w.Put(o.precise);
  return w.Take();
}

TaskOutcome TaskFromBytes(const std::string& bytes) {
  ByteReader r(bytes);
  TaskOutcome o;
  o.first_T = r.Get<std::uint64_t>();
  o.best_gap = r.Get<double>();
  o.best_counts = r.GetVector<std::uint64_t>();
  o.best_T = r.Get<std::uint64_t>();
  o.evaluated = r.GetVector<std::uint64_t>();
  o.pruned = r.GetVector<std::uint64_t>();
  o.max_gap = r.GetVector<double>();
  o.evaluations = r.Get<std::uint64_t>();
  o.cells = r.Get<std::uint64_t>();
  o.cells_pruned = r.Get<std::uint64_t>();
  o.max_pruned_bound = r.Get<double>();
  o.precise = r.Get<std::uint64_t>();
  return o;
}

}  // namespace ltsim::threshold
