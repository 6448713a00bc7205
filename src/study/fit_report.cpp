#include "ltsim/study/fit_report.h"

#include <limits>

#include "ltsim/study/report_format.h"

namespace ltsim {

void AppendEstimate(io::Json& json, const ExponentEstimate& e,
                    std::initializer_list<EstimateField> fields) {
  for (EstimateField field : fields) {
    switch (field) {
      case EstimateField::kExponent:
        json["exponent"] = FiniteNumber(e.exponent);
        break;
      case EstimateField::kExponentWithInterval:
        json["exponent"] = e.ci ? FiniteNumber(e.exponent) : io::Json(nullptr);
        break;
      case EstimateField::kCi:
        json["ci"] = IntervalJson(e.ci);
        break;
      case EstimateField::kLevel:
        json["level"] = kReportedLevel;
        break;
      case EstimateField::kTInterval:
        json["t_interval"] = IntervalJson(e.t_interval);
        break;
      case EstimateField::kBootstrapInterval:
        json["bootstrap_interval"] = IntervalJson(e.bootstrap_interval);
        break;
      case EstimateField::kPoints:
        json["points"] = e.points;
        break;
      case EstimateField::kPointsUsed:
        json["points_used"] = e.points_used;
        break;
      case EstimateField::kPointsCensored:
        json["points_censored"] = e.points_censored;
        break;
      case EstimateField::kReason:
        json["reason"] = e.reason;
        break;
    }
  }
}

io::Json SlopeFitJson(const ExponentEstimate& e) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  return {{"slope", FiniteNumber(e.ci ? e.exponent : kNaN)},
          {"intercept", FiniteNumber(e.ci ? e.intercept : kNaN)},
          {"lower", FiniteNumber(e.ci ? e.ci->first : kNaN)},
          {"upper", FiniteNumber(e.ci ? e.ci->second : kNaN)},
          {"level", kReportedLevel},
          {"standard_error", nullptr},
          {"points", e.points_used}};
}

}  // namespace ltsim
