// The tightness pairs of the family registry (docs/tightness.md §2) by positional arguments, as
// the tests build them: each is BuildFamilyMember of its family.
#pragma once

#include "ltsim/construct/families.h"

namespace ltsim::test {

inline FamilyMember OffsetBumpPair(int alphabet, int period, int locality, double slope, double eps,
                                   double offset) {
  return BuildFamilyMember("offset-bump", {{"alphabet", alphabet},
                                           {"period", period},
                                           {"locality", locality},
                                           {"slope", slope},
                                           {"eps", eps},
                                           {"offset", offset}});
}

inline FamilyMember MarginPair(double margin, int bits, double eta) {
  return BuildFamilyMember("margin", {{"margin", margin}, {"bits", bits}, {"eta", eta}});
}

inline FamilyMember PositionalMarginPair(double gamma_pos, double slope, double eps,
                                         double height) {
  return BuildFamilyMember(
      "positional-margin",
      {{"gamma-pos", gamma_pos}, {"slope", slope}, {"eps", eps}, {"height", height}});
}

inline FamilyMember TwoLayerMarginPair(double gamma_pos, double norm, double slope, double eps,
                                       double height) {
  return BuildFamilyMember("two-layer-margin", {{"gamma-pos", gamma_pos},
                                                {"norm", norm},
                                                {"slope", slope},
                                                {"eps", eps},
                                                {"height", height}});
}

inline FamilyMember AverageBumpPair(double alpha, double eps, double slope, double height,
                                    double offset, bool sqrt_form = false) {
  return BuildFamilyMember("average-bump", {{"alpha", alpha},
                                            {"eps", eps},
                                            {"slope", slope},
                                            {"height", height},
                                            {"offset", offset},
                                            {"sqrt-form", sqrt_form ? 1 : 0}});
}

}  // namespace ltsim::test
