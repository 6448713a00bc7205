// A Transformer as exact bytes (every weight bit-for-bit), for work items sent between ranks.
#pragma once

#include "ltsim/core/bytes.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// Appends `model` to `out`: every field, the weights as their IEEE bits.
void PutModel(ByteWriter& out, const Transformer& model);

/// Reads what PutModel wrote: GetModel(PutModel(m)) has the same fields and weights as m.
Transformer GetModel(ByteReader& in);

}  // namespace ltsim
