// The error of an item's bytes that do not decode (core/work.h's items, read back from a file).
#pragma once

#include "ltsim/core/error.h"

namespace ltsim {

/// What an ItemConsume (core/work.h) throws when an item's bytes do not decode to the shape it
/// expects (a shard file is input): a dealer that read them from a file prefixes the file and
/// the item (dist::ShardReplay).
class ItemBytesError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace ltsim
