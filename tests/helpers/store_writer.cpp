// Writes candidates and their measurements into a run store until it is killed (or has written <count> rows).
// After each row's transaction commits it prints one line and flushes:
//   <index> <candidate id> <measurement id> <measurement JSON>
// so a test that kills this process knows exactly which rows were reported committed.
//
// usage: store_writer <store.sqlite> [count]

#include "core/run_store.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

using namespace kerncast;

namespace {

Candidate make_candidate(int index, int64_t parent_id) {
    Candidate c;
    c.parent_id = parent_id;
    c.generation = index;
    c.mutator = index == 0 ? Mutator::Seed : Mutator::Parametric;
    c.label = "writer row " + std::to_string(index);
    // Long enough that rows span pages, so a torn write would show.
    c.source = "// @kerncast launch scale grid(ceil_div(N, BLOCK)) block(BLOCK) args(x, y, N)\n"
               "// row " +
               std::to_string(index) +
               "\n"
               "extern \"C\" __global__ void scale(const float* x, float* y, int N) {\n"
               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "    if (i < N) y[i] = " +
               std::to_string(index) +
               ".0f * x[i];\n"
               "}\n" +
               std::string(static_cast<size_t>(200 + index % 1500), '/') + "\n";
    c.tunables = {{"BLOCK", 64 << (index % 4)}};
    return c;
}

Measurement make_measurement(int index) {
    Measurement m;
    m.status = index % 7 == 3 ? Status::Incorrect : Status::Ok;
    m.reason = m.status == Status::Ok ? "" : "output mismatch at element " + std::to_string(index);
    TimingStats t;
    t.n = 5;
    t.samples_us = {10.0 + index, 10.5 + index, 11.0 + index, 11.5 + index, 12.0 + index};
    t.median_us = 11.0 + index;
    m.candidate = t;
    m.speedup = m.status == Status::Ok ? 100.0 / (11.0 + index) : 0;
    m.device.name = "replay";
    m.device_kind = "replay";
    return m;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: store_writer <store.sqlite> [count]\n");
        return 2;
    }
    const int count = argc > 2 ? std::atoi(argv[2]) : 1000000;
    try {
        auto store = RunStore::openOrCreate(argv[1]);
        auto runs = store.runs();
        int64_t run_id = 0;
        if (runs.empty()) {
            RunInfo run;
            run.name = "store writer";
            run_id = store.addRun(run);
        } else {
            run_id = runs.back().id;
        }
        int64_t parent = 0;
        for (int index = 0; index < count; ++index) {
            Candidate c = make_candidate(index, parent);
            const Measurement m = make_measurement(index);
            auto tx = store.transaction();
            store.addCandidate(run_id, c);
            const int64_t measurement_id = store.addMeasurement(c.id, m);
            tx.commit();
            // Only now is the row promised to be on disk.
            std::printf("%d %lld %lld %s\n", index, static_cast<long long>(c.id),
                        static_cast<long long>(measurement_id), nlohmann::json(m).dump().c_str());
            std::fflush(stdout);
            parent = c.id;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "store_writer: %s\n", e.what());
        return 1;
    }
    return 0;
}
