// Runs on every machine: without a driver it checks the readable failure, with one the device fingerprints.
#include "engine/gpu/cuda_driver.h"

#include <QTest>

using namespace kerncast;

class TestCudaDriver : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void availabilityIsExplained() {
        std::string why;
        const auto devices = cuda::discover_devices(&why);
        if (!cuda::available()) {
            const std::string reason = cuda::unavailable_reason();
            QVERIFY2(reason.find("libcuda") != std::string::npos || reason.find("cuInit") != std::string::npos,
                     reason.c_str());
            QVERIFY(devices.empty());
            QCOMPARE(why, reason);
            QVERIFY_THROWS_EXCEPTION(Error, cuda::api());
        } else {
            QVERIFY(cuda::unavailable_reason().empty());
            QVERIFY2(!devices.empty() || !why.empty(), "no devices and no reason");
        }
    }

    void fingerprintsAreSane() {
        if (!cuda::available())
            QSKIP("no CUDA driver on this machine");
        const auto devices = cuda::discover_devices();
        if (devices.empty())
            QSKIP("the driver reports no device");
        for (const DeviceFingerprint& d : devices) {
            QVERIFY(!d.name.empty());
            QVERIFY2(d.uuid.rfind("GPU-", 0) == 0 && d.uuid.size() == 40, d.uuid.c_str());
            QVERIFY(d.sm_count > 0);
            QVERIFY(d.cc_major >= 5);
            QVERIFY(d.l2_bytes > 0);
            QVERIFY(d.memory_bytes > (int64_t{1} << 30));
            QVERIFY(d.driver_version >= 11000);
            QVERIFY(d.cuda_version >= 12000);
            QVERIFY(d.slug() != "unknown-device");
        }
    }

    void errorNamesWithoutADriver_data() {
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("sticky");
        QTest::newRow("illegal address") << int(CUDA_ERROR_ILLEGAL_ADDRESS) << "CUDA_ERROR_ILLEGAL_ADDRESS" << true;
        QTest::newRow("launch failed") << int(CUDA_ERROR_LAUNCH_FAILED) << "CUDA_ERROR_LAUNCH_FAILED" << true;
        QTest::newRow("misaligned") << int(CUDA_ERROR_MISALIGNED_ADDRESS) << "CUDA_ERROR_MISALIGNED_ADDRESS" << true;
        QTest::newRow("illegal instruction")
            << int(CUDA_ERROR_ILLEGAL_INSTRUCTION) << "CUDA_ERROR_ILLEGAL_INSTRUCTION" << true;
        QTest::newRow("hardware stack") << int(CUDA_ERROR_HARDWARE_STACK_ERROR) << "CUDA_ERROR_HARDWARE_STACK_ERROR"
                                        << true;
        QTest::newRow("device assert") << int(CUDA_ERROR_ASSERT) << "CUDA_ERROR_ASSERT" << true;
        QTest::newRow("invalid value") << int(CUDA_ERROR_INVALID_VALUE) << "CUDA_ERROR_INVALID_VALUE" << false;
        QTest::newRow("out of resources")
            << int(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) << "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" << false;
        QTest::newRow("not found") << int(CUDA_ERROR_NOT_FOUND) << "CUDA_ERROR_NOT_FOUND" << false;
        QTest::newRow("out of memory") << int(CUDA_ERROR_OUT_OF_MEMORY) << "CUDA_ERROR_OUT_OF_MEMORY" << false;
    }
    void errorNamesWithoutADriver() {
        QFETCH(int, code);
        QFETCH(QString, name);
        QFETCH(bool, sticky);
        const auto rc = static_cast<CUresult>(code);
        QCOMPARE(QString::fromStdString(cuda::error_name(rc)), name);
        QVERIFY(!cuda::error_string(rc).empty());
        QCOMPARE(cuda::is_sticky(rc), sticky);
        const cuda::CudaError e(rc, "running kernel k");
        QVERIFY(QString::fromUtf8(e.what()).startsWith("running kernel k: " + name + " ("));
        QCOMPARE(e.sticky(), sticky);
        QCOMPARE(e.code(), rc);
    }

    void checkThrowsOnlyOnFailure() {
        cuda::check(CUDA_SUCCESS, "nothing");
        QVERIFY_THROWS_EXCEPTION(cuda::CudaError, cuda::check(CUDA_ERROR_INVALID_VALUE, "x"));
    }

    void uuidFormat() {
        const unsigned char bytes[16] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
                                         0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
        QCOMPARE(cuda::format_uuid(bytes), std::string("GPU-12345678-9abc-def0-0123-456789abcdef"));
    }

    void nvmlIsOptional() {
        // Without NVML (or for an unknown device) clocks read as zeros rather than failing.
        const ClockSample s = nvml::sample("GPU-00000000-0000-0000-0000-000000000000");
        QCOMPARE(s.sm_clock_mhz, 0);
        QCOMPARE(s.temperature_c, 0);
        int sm = -1, mem = -1;
        QVERIFY(!nvml::max_clocks("", &sm, &mem));
        QCOMPARE(sm, -1);
    }
};

QTEST_GUILESS_MAIN(TestCudaDriver)
#include "tst_cuda_driver.moc"
