// Rechecks a search witness (from `ltsim search --out`) in high precision and saves it under its
// content-hash name: how corpus/witnesses/*.search.json are made (see its README).
#include <iostream>

#include "ltsim/bounds/search_witness_io.h"
#include "ltsim/core/error.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: save_search_witness SEARCH_WITNESS.json DIR_OR_PATH\n";
    return 2;
  }
  try {
    const ltsim::SearchWitness w = ltsim::ReadSearchWitness(argv[1]);
    ltsim::SearchOptions options;
    options.objective = w.objective;
    options.eps = w.eps;
    options.n = w.n;
    const std::string path = ltsim::SaveSearchWitness(argv[2], options, w.candidate);
    const ltsim::SearchReplay r = ltsim::ReplaySearchWitness(path);
    std::cout << path << ": " << w.objective << " = " << r.value << ", recheck " << r.recheck.status
              << " (precise " << r.recheck.precise_text << ")\n";
    return r.reproduced ? 0 : 1;
  } catch (const ltsim::InputError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}
