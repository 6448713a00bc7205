// The model format's error funnel; parsing itself is the shared strict layer (src/io/).
#include "model/model_json.h"

#include "ltsim/core/error.h"

namespace ltsim::model_json {

[[noreturn]] void Fail(const std::string& source, const std::string& path,
                       const std::string& rule) {
  throw InputError(source + ": " + (path.empty() ? rule : path + ": " + rule));
}

}  // namespace ltsim::model_json
