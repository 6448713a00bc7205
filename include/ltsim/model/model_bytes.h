// A Transformer as exact bytes (every weight bit-for-bit), for work items sent between ranks.
#pragma once

#include "ltsim/core/bytes.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// Appends `model` to `out`: every field, the weights as their IEEE bits.
void PutModel(ByteWriter& out, const Transformer& model);

/// Reads what PutModel wrote: GetModel(PutModel(m)) has the same fields and weights as m.
Transformer GetModel(ByteReader& in);

/// A Transformer as a field of a dealt struct (core/bytes.h): PutModel and GetModel.
inline void PutField(ByteWriter& out, const Transformer& model) { PutModel(out, model); }
inline void GetField(ByteReader& in, Transformer& model) { model = GetModel(in); }

}  // namespace ltsim
