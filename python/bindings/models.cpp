// Models in Python: reading, writing, sizes, constants, evaluation and the constructed models.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <cmath>

#include "common.h"
#include "ltsim/bounds/registry.h"
#include "ltsim/construct/families.h"
#include "ltsim/construct/kgram.h"
#include "ltsim/construct/tasks.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/model/constants.h"
#include "ltsim/model/model_file.h"

namespace ltsim::python {
namespace {

ModelPtr Share(Transformer model) { return std::make_shared<Transformer>(std::move(model)); }

// The sizes and constants `ltsim info --json` prints (docs/model.md §4), NaN where they do not
// apply, with the reason a constant was not computed.
py::dict Info(const Transformer& model) {
  py::dict d;
  const bool one_layer = model.layers.size() == 1;
  d["name"] = model.name;
  d["alphabet"] = model.alphabet;
  d["width"] = model.width;
  d["period"] = model.period;
  d["locality"] = model.locality;
  d["layers"] = model.layers.size();
  py::list heads, attention;
  for (const Layer& layer : model.layers) {
    heads.append(layer.heads.size());
    attention.append(AttentionName(layer.attention));
  }
  d["heads"] = heads;
  d["attention"] = attention;
  d["outputs"] = model.outputs();
  const bool too_much = one_layer && LogitMarginWork(model) > kMaxLogitMarginWork;
  d["logit_margin"] = one_layer ? LogitMargin(model) : std::nan("");
  d["hardmax_length"] = one_layer ? HardmaxLength(model) : std::nan("");
  d["log2_hardmax_length"] = one_layer ? Log2HardmaxLength(model) : std::nan("");
  d["lipschitz"] = LipschitzConstant(model);
  d["positional_margin"] = PositionalMargin(model);
  const double log_c = LogComplexity(model);
  d["log_complexity"] = log_c;
  d["complexity"] = std::exp(log_c);
  py::list regimes;
  for (HeadRegime regime : HeadRegimes(model)) regimes.append(HeadRegimeName(regime));
  d["regimes"] = regimes;
  py::dict not_computed;
  if (too_much) {
    const std::string why =
        fmt::format("{:.3g} logits over the work limit of {:.3g} (docs/formats.md §6.1)",
                    LogitMarginWork(model), kMaxLogitMarginWork);
    not_computed["logit_margin"] = why;
    if (model.layers.front().attention == Attention::kFinite) {
      not_computed["hardmax_length"] = why;
      not_computed["log2_hardmax_length"] = why;
    }
  }
  d["not_computed"] = not_computed;
  return d;
}

py::list LayersOf(const Transformer& model) {
  py::list layers;
  for (const Layer& layer : model.layers) {
    py::dict d;
    d["attention"] = AttentionName(layer.attention);
    d["bias_scaling"] = BiasScalingName(layer.bias_scaling);
    d["precision_bits"] = layer.precision_bits;
    d["heads"] = layer.heads.size();
    d["mlp"] = layer.mlp.has_value();
    layers.append(d);
  }
  return layers;
}

py::array_t<double> EvaluateOn(const ModelPtr& model, const py::object& x, py::object progress) {
  ProgressHook hook(std::move(progress));
  std::unique_ptr<Source> source = WithHook(SourceFromPython(x, "x"), hook);
  const Vector out = RunWithoutGil(hook, [&] { return Evaluate(*model, *source); });
  return VectorToNumpy(out);
}

// A family member's numbers and its two models.
py::dict FamilyMemberDict(const FamilyMember& member) {
  py::dict d;
  d["family"] = member.family;
  py::dict values;
  for (const auto& [name, value] : member.values) values[py::str(name)] = value;
  d["values"] = values;
  d["f"] = Share(member.f);  // both carry the family's `meta` already
  d["g"] = Share(member.g);
  d["eps"] = member.eps;
  d["first_disagreement"] = member.first_disagreement;
  d["closed_form"] = member.closed_form;
  d["growth"] = member.growth;
  d["gap_at_first_disagreement"] = member.gap_at_first_disagreement;
  d["sup_gap"] = member.sup_gap;
  return d;
}

}  // namespace

void BindModels(py::module_& m) {
  py::class_<Transformer, std::shared_ptr<Transformer>>(m, "NativeModel",
                                                        "A limit transformer held by C++.")
      .def_property_readonly("name", [](const Transformer& t) { return t.name; })
      .def_property_readonly("alphabet", [](const Transformer& t) { return t.alphabet; })
      .def_property_readonly("width", [](const Transformer& t) { return t.width; })
      .def_property_readonly("period", [](const Transformer& t) { return t.period; })
      .def_property_readonly("locality", [](const Transformer& t) { return t.locality; })
      .def_property_readonly("outputs", [](const Transformer& t) { return t.outputs(); })
      .def_property_readonly("tie_tolerance", [](const Transformer& t) { return t.tie_tolerance; })
      .def_property_readonly("meta_json", [](const Transformer& t) { return t.meta_json; })
      .def_property_readonly("layers", &LayersOf)
      .def("to_json", [](const Transformer& t) { return ModelToJson(t); })
      .def("write", [](const Transformer& t, const std::string& path) { WriteModel(t, path); })
      .def("info", &Info);
  m.def("read_model", [](const std::string& path) {
    py::gil_scoped_release release;
    return Share(ReadModel(path));
  });
  m.def("parse_model", [](const std::string& text, const std::string& source) {
    return Share(ParseModel(text, source));
  });
  m.def("evaluate", &EvaluateOn, py::arg("model"), py::arg("x"), py::arg("progress") = py::none());
  m.def(
      "model_constants",
      [](const ModelPtr& f, const ModelPtr& g) {
        ConstantMap c = g ? PairConstants(*f, *g) : ModelConstants(*f);
        py::dict d;
        for (const auto& [name, value] : c) d[py::str(name)] = value;
        return d;
      },
      py::arg("f"), py::arg("g") = nullptr);
  m.def("bounds", [](const std::map<std::string, double>& constants) {
    py::list rows;
    for (const Bound& bound : BoundRegistry()) {
      py::dict row;
      row["name"] = bound.name;
      row["formula"] = bound.formula;
      row["source"] = bound.source;
      row["note"] = bound.note;
      row["value"] = bound.value(constants);
      rows.append(row);
    }
    return rows;
  });
  m.def("evaluate_bound",
        [](const std::string& expression, const std::map<std::string, double>& constants) {
          return EvaluateBoundExpression(expression, constants);
        });
  m.def("simple_task", [](double omega, double accuracy) {
    Transformer model = MakeSimpleTask(omega, accuracy);
    model.meta_json =
        fmt::format(R"({{"task":"simple-task","omega":{},"accuracy":{}}})", omega, accuracy);
    return Share(std::move(model));
  });
  m.def("modp_task", [](int p, int k, int precision_bits) {
    if (p < 1 || p > 1000) throw OptionError("p", "must be in [1, 1000]", std::to_string(p));
    if (k < 0 || k >= p)
      throw OptionError("k", fmt::format("is not a residue modulo p = {}", p), std::to_string(k));
    if (precision_bits < 0 || precision_bits > 64)
      throw OptionError("precision_bits", "must be in [0, 64]", std::to_string(precision_bits));
    Transformer model = MakeModPTask(p, k, precision_bits);
    model.meta_json = fmt::format(R"({{"task":"modp-task","p":{},"k":{},"precision_bits":{}}})", p,
                                  k, precision_bits);
    return Share(std::move(model));
  });
  m.def("kgram", [](int alphabet, int k, double scale, const std::string& no_match,
                    double copy_bias, bool sharpen) {
    KGramOptions options;
    options.alphabet = alphabet;
    options.k = k;
    options.scale = scale;
    options.no_match = ParseNoMatchPolicy(no_match);
    options.copy_bias = copy_bias;
    options.sharpen = sharpen;
    ValidateKGramOptions(options);
    return Share(MakeKGram(options));
  });
  m.def("families", [] {
    py::list out;
    for (const Family& family : Families()) {
      py::dict d;
      d["name"] = family.name;
      d["summary"] = family.summary;
      d["parameters"] = family.parameters;
      py::list params;
      for (const FamilyParameter& p : family.params) {
        py::dict pd;
        pd["name"] = p.name;
        pd["default"] = p.default_value;
        pd["min"] = p.min;
        pd["max"] = p.max;
        pd["integer"] = p.integer;
        pd["help"] = p.help;
        params.append(pd);
      }
      d["params"] = params;
      out.append(d);
    }
    return out;
  });
  m.def("family_member", [](const std::string& name, const FamilyValues& values) {
    return FamilyMemberDict(BuildFamilyMember(name, values));
  });
}

}  // namespace ltsim::python
