// Parent selection: PUCT max-reward, islands, greedy; pin, ban, exhaustion.
#include "core/search_strategy.h"

#include <QtTest>

using namespace kerncast;

class TestSearchStrategy : public QObject {
    Q_OBJECT

private slots:
    void puctExploitsThenExplores() {
        StrategyConfig c;
        c.kind = StrategyKind::Puct;
        c.c_puct = 1.0;
        SearchStrategy s(c);
        s.addMeasured(1, 0, 1.0, true);
        s.addMeasured(2, 0, 2.0, true);
        s.addMeasured(3, 0, 1.5, true);
        SplitMix rng(1);
        QCOMPARE(*s.selectParent(rng), int64_t(2));
        // Expanding the best again and again lowers its exploration term until another parent wins.
        std::set<int64_t> picked;
        for (int i = 0; i < 40; ++i) {
            const int64_t p = *s.selectParent(rng);
            picked.insert(p);
            s.noteExpanded(p, false);
        }
        QVERIFY(picked.count(3));
        QVERIFY(s.expansions(2) > s.expansions(3));
        QVERIFY(s.expansions(3) >= s.expansions(1));
    }

    void maxRewardBacksUpTheSubtree() {
        // A parent whose child was fast is preferred over an equally fast parent with a slow subtree.
        StrategyConfig c;
        c.c_puct = 0.0;  // pure exploitation of Q
        SearchStrategy s(c);
        s.addMeasured(1, 0, 1.0, true);
        s.addMeasured(2, 0, 1.0, true);
        s.addMeasured(10, 1, 3.0, false);  // child of 1, not expandable itself
        SplitMix rng(1);
        QCOMPARE(*s.selectParent(rng), int64_t(1));
        QCOMPARE(*s.best(), int64_t(10));
        QCOMPARE(s.elites(2), (std::vector<int64_t>{10, 1}));
    }

    void greedyClimbsUntilPatienceRunsOut() {
        StrategyConfig c;
        c.kind = StrategyKind::Greedy;
        c.greedy_patience = 2;
        SearchStrategy s(c);
        s.addMeasured(1, 0, 1.0, true);
        s.addMeasured(2, 0, 2.0, true);
        SplitMix rng(1);
        QCOMPARE(*s.selectParent(rng), int64_t(2));
        s.noteExpanded(2, false);
        QCOMPARE(*s.selectParent(rng), int64_t(2));
        s.noteExpanded(2, false);
        QCOMPARE(*s.selectParent(rng), int64_t(1));
        s.noteExpanded(1, true);  // an improvement keeps a parent fresh
        QCOMPARE(*s.selectParent(rng), int64_t(1));
    }

    void islandsStayApartUntilMigration() {
        StrategyConfig c;
        c.kind = StrategyKind::Islands;
        c.islands = 2;
        c.migrate_every = 1000;
        c.tournament = 2;
        SearchStrategy s(c);
        s.addMeasured(1, 0, 1.0, true);  // island 0
        s.addMeasured(2, 0, 5.0, true);  // island 1
        s.addMeasured(3, 1, 2.0, true);  // child of 1: island 0
        SplitMix rng(7);
        std::set<int64_t> island0, island1;
        for (int i = 0; i < 20; ++i) {
            (i % 2 == 0 ? island0 : island1).insert(*s.selectParent(rng));
        }
        QVERIFY(!island0.count(2));
        QCOMPARE(island1, (std::set<int64_t>{2}));
        // Determinism: the same random state gives the same parents.
        SearchStrategy a(c), b(c);
        for (auto* x : {&a, &b}) {
            x->addMeasured(1, 0, 1.0, true);
            x->addMeasured(2, 0, 5.0, true);
            x->addMeasured(3, 1, 2.0, true);
        }
        SplitMix ra(5), rb(5);
        for (int i = 0; i < 30; ++i)
            QCOMPARE(*a.selectParent(ra), *b.selectParent(rb));
    }

    void migrationCarriesTheBestToTheNextIsland() {
        StrategyConfig c;
        c.kind = StrategyKind::Islands;
        c.islands = 2;
        c.migrate_every = 1;
        c.tournament = 8;
        SearchStrategy s(c);
        s.addMeasured(1, 0, 1.0, true);  // island 0
        s.addMeasured(2, 0, 5.0, true);  // island 1
        SplitMix rng(7);
        std::set<int64_t> picked;
        for (int i = 0; i < 10; ++i)
            picked.insert(*s.selectParent(rng));
        // The first selection migrates 2 into island 0, whose tournament of 8 then picks the better one too: every
        // selection, from either island, is 2.
        QCOMPARE(picked, (std::set<int64_t>{2}));
    }

    void pinBanAndExhaustion() {
        SearchStrategy s;
        s.addMeasured(1, 0, 1.0, true);
        s.addMeasured(2, 0, 2.0, true);
        s.addMeasured(3, 0, 9.0, false);  // not expandable (e.g. a seed for the parametric mutator)
        SplitMix rng(1);
        QCOMPARE(*s.selectParent(rng), int64_t(2));
        s.pin(1);
        QCOMPARE(*s.selectParent(rng), int64_t(1));
        s.unpin();
        s.ban(2);
        QCOMPARE(*s.selectParent(rng), int64_t(1));
        s.markExhausted(1);
        QVERIFY(!s.selectParent(rng).has_value());
        s.unban(2);
        QCOMPARE(*s.selectParent(rng), int64_t(2));
    }
};

QTEST_APPLESS_MAIN(TestSearchStrategy)
#include "tst_search_strategy.moc"
