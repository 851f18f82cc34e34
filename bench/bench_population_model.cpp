// How the population views scale: loading, sorting and filtering the table through its proxy, live updates, the
// lineage tree, and reading a run back from the store. The table must stay smooth at 100k candidates (target:
// load + sort by speedup under 50 ms). No GPU, no display.
//   kerncast-bench-population-model [--rows 10000,100000] [--repeat 5] [--store-rows 10000]

#include "core/run_store.h"
#include "widgets/candidate_row.h"
#include "widgets/lineage_model.h"
#include "widgets/population_filter_proxy.h"
#include "widgets/population_model.h"

#include <QCoreApplication>
#include <QTemporaryDir>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace kerncast;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A population shaped like a search: a few roots, children of earlier candidates, a third measured.
std::vector<CandidateRow> makeRows(int n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(0, 1);
    const QStringList pending{QStringLiteral("forecast"), QStringLiteral("trusted"), QStringLiteral("discarded"),
                              QStringLiteral("queued")};
    const QStringList outcomes{QStringLiteral("ok"),
                               QStringLiteral("ok"),
                               QStringLiteral("ok"),
                               QStringLiteral("incorrect"),
                               QStringLiteral("compile_error"),
                               QStringLiteral("timeout")};
    std::vector<CandidateRow> rows;
    rows.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
        CandidateRow r;
        r.id = i + 1;
        r.run_id = 1;
        r.parent_id = i < 4 ? 0 : 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(i));
        r.generation = i < 4 ? 0 : 1 + static_cast<int>(rng() % 30);
        r.mutator = i < 4 ? Mutator::Seed : static_cast<Mutator>(2 + rng() % 3);
        r.label = QStringLiteral("family BLOCK=%1 ITEMS=%2").arg(64 << (rng() % 5)).arg(1 << (rng() % 4));
        r.source_hash = QString::number(static_cast<qulonglong>(rng()) << 32 | rng(), 16);
        r.predicted_bin = 1 + static_cast<int>(rng() % 8);
        r.confidence = 0.2 + 0.8 * unit(rng);
        r.registers = 16 + static_cast<int>(rng() % 112);
        r.smem_bytes = static_cast<int>(rng() % 49152);
        if (rng() % 3 == 0) {
            r.status = outcomes[static_cast<int>(rng() % outcomes.size())];
            if (r.status == QLatin1String("ok")) {
                r.measured_speedup = std::exp(unit(rng) * 3 - 1.5);
                r.time_us = 100 / *r.measured_speedup;
            }
        } else {
            r.status = pending[static_cast<int>(rng() % pending.size())];
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

struct Result {
    std::string operation;
    int rows = 0;
    double median = 0;
    double min = 0;
};

// Runs prepare() untimed, then body() timed, `repeat` times.
Result measure(const std::string& operation, int rows, int repeat, const std::function<void()>& prepare,
               const std::function<void()>& body) {
    std::vector<double> times;
    for (int i = 0; i < repeat; ++i) {
        prepare();
        const auto start = Clock::now();
        body();
        times.push_back(msSince(start));
    }
    std::sort(times.begin(), times.end());
    return {operation, rows, times[times.size() / 2], times.front()};
}

std::vector<int> parseList(const char* text) {
    std::vector<int> out;
    for (const char* p = text; *p;) {
        out.push_back(std::atoi(p));
        const char* comma = std::strchr(p, ',');
        if (!comma)
            break;
        p = comma + 1;
    }
    return out;
}

SearchEvent measuredEvent(int64_t id, double speedup) {
    SearchEvent e;
    e.kind = SearchEvent::Kind::Measured;
    e.run_id = 1;
    e.candidate_id = id;
    Measurement m;
    m.status = Status::Ok;
    m.speedup = speedup;
    TimingStats t;
    t.median_us = 100 / speedup;
    m.candidate = t;
    e.measurement = m;
    e.speedup = speedup;
    return e;
}

SearchEvent proposedEvent(int64_t id, int64_t parent) {
    SearchEvent e;
    e.kind = SearchEvent::Kind::CandidateProposed;
    e.run_id = 1;
    Candidate c;
    c.id = id;
    c.parent_id = parent;
    c.generation = 5;
    c.mutator = Mutator::LlmDiff;
    c.label = "llm diff";
    e.candidate = c;
    return e;
}

std::vector<Result> benchTable(int n, int repeat) {
    std::vector<Result> out;
    const std::vector<CandidateRow> rows = makeRows(n, 1234);
    std::vector<CandidateRow> copy;
    PopulationModel* model = nullptr;
    PopulationFilterProxy* proxy = nullptr;
    auto fresh = [&] {
        delete proxy;
        delete model;
        model = new PopulationModel;
        proxy = new PopulationFilterProxy;
        proxy->setSourceModel(model);
        copy = rows;
    };
    auto loaded = [&] {
        fresh();
        model->setRows(copy);
    };
    auto sortedBySpeedup = [&] {
        loaded();
        proxy->sort(PopulationModel::SpeedupColumn, Qt::DescendingOrder);
    };

    out.push_back(measure("load (setRows)", n, repeat, fresh, [&] { model->setRows(std::move(copy)); }));
    out.push_back(
        measure("load (appendRows, one batch)", n, repeat, fresh, [&] { model->appendRows(std::move(copy)); }));
    {
        PopulationModel* alone = nullptr;
        out.push_back(measure(
            "load (appendRows, one batch), no proxy", n, repeat,
            [&] {
            delete alone;
            alone = new PopulationModel;
            copy = rows;
            },
            [&] { alone->appendRows(std::move(copy)); }));
        delete alone;
    }
    out.push_back(measure("sort by speedup, descending", n, repeat, loaded,
                          [&] { proxy->sort(PopulationModel::SpeedupColumn, Qt::DescendingOrder); }));
    out.push_back(measure("load + sort by speedup (target < 50 ms)", n, repeat, fresh, [&] {
        model->setRows(std::move(copy));
        proxy->sort(PopulationModel::SpeedupColumn, Qt::DescendingOrder);
    }));
    out.push_back(measure(
        "append into a proxy sorted by speedup", n, repeat,
        [&] {
        fresh();
        proxy->sort(PopulationModel::SpeedupColumn, Qt::DescendingOrder);
        },
        [&] { model->appendRows(std::move(copy)); }));
    out.push_back(measure("sort by status", n, repeat, loaded,
                          [&] { proxy->sort(PopulationModel::StatusColumn, Qt::AscendingOrder); }));
    out.push_back(measure("sort by forecast", n, repeat, loaded,
                          [&] { proxy->sort(PopulationModel::ForecastColumn, Qt::DescendingOrder); }));
    {
        // The same sort through QVariant (a plain QSortFilterProxyModel on SortRole), for comparison.
        QSortFilterProxyModel* plain = nullptr;
        out.push_back(measure(
            "sort by speedup, plain QSortFilterProxyModel", n, repeat,
            [&] {
            loaded();
            delete plain;
            plain = new QSortFilterProxyModel;
            plain->setSortRole(PopulationModel::SortRole);
            plain->setSourceModel(model);
            },
            [&] { plain->sort(PopulationModel::SpeedupColumn, Qt::DescendingOrder); }));
        delete plain;
    }
    // A filter change is timed with the first rowCount() a view makes afterwards: the proxy may map rows lazily.
    out.push_back(measure("text filter \"BLOCK=256\" (sorted)", n, repeat, sortedBySpeedup, [&] {
        proxy->setTextFilter(QStringLiteral("BLOCK=256"));
        (void)proxy->rowCount();
    }));
    out.push_back(measure("status filter ok+incorrect (sorted)", n, repeat, sortedBySpeedup, [&] {
        proxy->setStatusFilter({QStringLiteral("ok"), QStringLiteral("incorrect")});
        (void)proxy->rowCount();
    }));
    out.push_back(measure("measured only (sorted)", n, repeat, sortedBySpeedup, [&] {
        proxy->setMeasuredOnly(true);
        (void)proxy->rowCount();
    }));

    std::vector<CandidateRow> updates;
    for (int count : {20, 1000}) {
        out.push_back(measure(
            "updateRows, " + std::to_string(count) + " scattered rows (sorted)", n, repeat,
            [&] {
            sortedBySpeedup();
            updates.clear();
            for (int i = 0; i < count; ++i) {
                CandidateRow r = rows[static_cast<size_t>((i * 7919) % n)];
                r.status = QStringLiteral("ok");
                r.measured_speedup = 0.5 + (i % 97) / 20.0;
                updates.push_back(std::move(r));
            }
            },
            [&] { model->updateRows(std::move(updates)); }));
    }
    // The first rows appended after a load grow the table's storage (a one-off move of every row); later batches
    // find room.
    auto oneNewRow = [&] {
        CandidateRow extra = makeRows(1, 5).front();
        extra.id = 10 * static_cast<int64_t>(n);
        return std::vector<CandidateRow>{extra};
    };
    out.push_back(measure("first append after a load: 1 row (storage grows)", n, repeat, sortedBySpeedup,
                          [&] { model->appendRows(oneNewRow()); }));
    auto grown = [&] {
        sortedBySpeedup();
        model->appendRows(oneNewRow());
    };
    // One batch from the bridge (at most ~20 a second): proposals and measurements of a busy search, then a flood.
    std::vector<SearchEvent> events;
    for (int count : {50, 500}) {
        out.push_back(measure(
            "applyEvents, " + std::to_string(count) + " new + " + std::to_string(count) + " measured (sorted)", n,
            repeat,
            [&] {
            grown();
            events.clear();
            for (int i = 0; i < count; ++i) {
                events.push_back(proposedEvent(n + 1 + i, 1 + (i * 31) % n));
                events.push_back(measuredEvent(1 + (i * 7919) % n, 0.5 + (i % 97) / 20.0));
            }
            },
            [&] { model->applyEvents(events); }));
    }

    LineageModel* lineage = nullptr;
    out.push_back(measure(
        "lineage tree, built over the table", n, repeat,
        [&] {
        loaded();
        delete lineage;
        lineage = new LineageModel;
        },
        [&] { lineage->setPopulation(model); }));
    out.push_back(measure(
        "lineage, 1000 rows appended (1000-row batches)", n, repeat,
        [&] {
        fresh();
        copy.resize(static_cast<size_t>(n - 1000));
        model->setRows(std::move(copy));
        delete lineage;
        lineage = new LineageModel;
        lineage->setPopulation(model);
        copy.assign(rows.end() - 1000, rows.end());
        },
        [&] { model->appendRows(std::move(copy)); }));
    delete lineage;
    delete proxy;
    delete model;
    return out;
}

Result benchStore(int n, int repeat) {
    QTemporaryDir dir;
    auto store = RunStore::create(dir.filePath(QStringLiteral("bench.sqlite")).toStdString());
    RunInfo run;
    run.name = "bench";
    const int64_t runId = store.addRun(run);
    const std::vector<CandidateRow> rows = makeRows(n, 99);
    {
        auto tx = store.transaction();
        std::vector<int64_t> ids;
        for (const CandidateRow& r : rows) {
            Candidate c;
            const auto parentIndex = static_cast<size_t>(r.parent_id - 1);
            c.parent_id = r.parent_id > 0 ? ids[parentIndex] : 0;
            c.generation = r.generation;
            c.mutator = r.mutator;
            c.label = r.label.toStdString();
            c.source = "// " + c.label + "\n";
            ids.push_back(store.addCandidate(runId, c));
            store.addStaticReports(c.id, {{"k", r.registers, r.smem_bytes, 0, 0, 0, 0, 1, 0}});
            store.addForecast(c.id, Forecast::fromRaw({0.05, 0.05, 0.1, 0.2, 0.3, 0.2, 0.05, 0.05}));
            if (r.measured_speedup) {
                Measurement m;
                m.status = Status::Ok;
                m.speedup = *r.measured_speedup;
                store.addMeasurement(c.id, m);
            }
        }
        tx.commit();
    }
    return measure(
        "rowsFromStore (candidate + forecast + report + measurement)", n, repeat, [] {},
        [&] { (void)rowsFromStore(store, runId); });
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    std::vector<int> sizes{10000, 100000};
    int repeat = 5;
    int storeRows = 10000;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--rows" && i + 1 < argc)
            sizes = parseList(argv[++i]);
        else if (arg == "--repeat" && i + 1 < argc)
            repeat = std::max(1, std::atoi(argv[++i]));
        else if (arg == "--store-rows" && i + 1 < argc)
            storeRows = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: kerncast-bench-population-model [--rows 10000,100000] [--repeat 5] "
                                 "[--store-rows 10000]\n");
            return 2;
        }
    }

    std::vector<Result> results;
    for (int n : sizes) {
        auto table = benchTable(n, repeat);
        results.insert(results.end(), table.begin(), table.end());
    }
    if (storeRows > 0)
        results.push_back(benchStore(storeRows, repeat));

    std::printf("| operation | rows | median ms | min ms |\n|---|---:|---:|---:|\n");
    for (const Result& r : results)
        std::printf("| %s | %d | %.1f | %.1f |\n", r.operation.c_str(), r.rows, r.median, r.min);
    return 0;
}
