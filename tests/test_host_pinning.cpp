// Page spans of host data to pin for CUDA copies (experiments/host_pinning):
// widened to whole pages, merged where tiles share or touch a page, each
// page registered once; a device that does not pin is asked once and left
// alone; everything pinned is unpinned.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/host_pinning.hpp"
#include "platform/native/host_memory_device.hpp"

namespace tessera {
namespace {

using platform::HostRange;

std::byte* at(std::uintptr_t a) { return reinterpret_cast<std::byte*>(a); }

TEST(PageSpans, WidensToPagesAndMergesNeighbours) {
  const std::size_t pg = 4096;
  const std::uintptr_t base = 1000 * pg;
  // Out of order; [A] 100 bytes inside page 0; [B] from page 0's end into
  // page 2 (shares page 0 with A); [C] exactly page 5; [D] page 6 (touches C);
  // [E] empty; [F] page 9, partly.
  const std::vector<HostRange> in = {{at(base + 6 * pg), pg}, {at(base + 10), 100},   {at(base + pg - 8), pg + 16},
                                     {at(base + 5 * pg), pg}, {at(base + 3 * pg), 0}, {at(base + 9 * pg + 1), 5}};
  const std::vector<HostRange> out = driver::page_spans(in, pg);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].ptr, at(base));
  EXPECT_EQ(out[0].bytes, 3 * pg);  // pages 0-2: A and B
  EXPECT_EQ(out[1].ptr, at(base + 5 * pg));
  EXPECT_EQ(out[1].bytes, 2 * pg);  // pages 5-6: C and D
  EXPECT_EQ(out[2].ptr, at(base + 9 * pg));
  EXPECT_EQ(out[2].bytes, pg);
  EXPECT_TRUE(driver::page_spans({}, pg).empty());
}

// A host-memory device that records what it is asked to pin and unpin.
class PinningDevice final : public platform::HostMemoryDevice {
 public:
  explicit PinningDevice(bool pins) : HostMemoryDevice(1, std::size_t{1} << 20, true), pins_(pins) {}
  std::string name() const override { return "GPU 1 (pinning test)"; }
  bool pins_host() const override { return pins_; }
  // The call numbered locked_at finds its span locked already; the one
  // numbered fail_at cannot lock its span; unpinning fails from unpin_fail_at on.
  bool pin_host(std::byte* p, std::size_t bytes) override {
    ++asked;
    if (asked == fail_at) throw std::runtime_error("cudaHostRegister: out of memory (test)");
    if (asked == locked_at) return false;
    pinned.push_back({p, bytes});
    return true;
  }
  void unpin_host(std::byte* p) override {
    if (unpin_fail_at > 0 && static_cast<int>(unpinned.size()) + 1 >= unpin_fail_at)
      throw std::runtime_error("cudaHostUnregister failed (test)");
    unpinned.push_back(p);
  }
  int asked = 0, fail_at = 0, locked_at = 0, unpin_fail_at = 0;
  std::vector<HostRange> pinned;
  std::vector<std::byte*> unpinned;

 protected:
  void transfer(int, std::size_t, bool, double) override {}
  void launch(int, std::function<void()> job) override { job(); }

 private:
  bool pins_;
};

TEST(HostPinning, PinsEachSpanOnceAndUnpinsThemAll) {
  PinningDevice dev(true);
  std::vector<std::byte> a(3 * 65536), b(65536);
  {
    driver::HostPinning pin(dev, {{a.data(), a.size()}, {b.data(), b.size()}, {a.data() + 10, 20}});
    EXPECT_EQ(dev.asked, static_cast<int>(dev.pinned.size()));
    std::size_t total = 0;
    for (const HostRange& r : dev.pinned) total += r.bytes;
    EXPECT_EQ(pin.bytes(), total);
    EXPECT_GE(total, a.size() + b.size());
    EXPECT_GE(pin.pin_s(), 0.0);
    EXPECT_TRUE(dev.unpinned.empty());
  }
  ASSERT_EQ(dev.unpinned.size(), dev.pinned.size());
  for (std::size_t i = 0; i < dev.pinned.size(); ++i) EXPECT_EQ(dev.unpinned[i], dev.pinned[i].ptr);
}

TEST(HostPinning, ADeviceThatDoesNotPinIsNotAsked) {
  PinningDevice dev(false);
  std::vector<std::byte> a(65536), b(65536);
  {
    driver::HostPinning pin(dev, {{a.data(), a.size()}, {b.data() + 4096 * 3, 4096}});
    EXPECT_EQ(pin.bytes(), 0u);
    EXPECT_EQ(pin.warning(), "");
    // Exactly zero, not the clock around nothing: a simulated run's JSON carries these and must be reproducible.
    EXPECT_EQ(pin.pin_s(), 0.0);
    EXPECT_EQ(pin.unpin(), 0.0);
  }
  EXPECT_EQ(dev.asked, 0);
  EXPECT_TRUE(dev.unpinned.empty());
}

// Three ranges two pages apart in one buffer: three spans.
std::vector<HostRange> three_spans(std::vector<std::vector<std::byte>>& keep) {
  const std::size_t pg = 4096;
  keep.assign(1, std::vector<std::byte>(16 * pg));
  const auto a = reinterpret_cast<std::uintptr_t>(keep[0].data());
  std::byte* base = reinterpret_cast<std::byte*>((a + pg - 1) / pg * pg);
  return {{base, pg}, {base + 3 * pg, pg}, {base + 6 * pg, 2 * pg}};
}

TEST(HostPinning, ASpanLockedAlreadyIsLeftToItsOwner) {
  PinningDevice dev(true);
  dev.locked_at = 2;
  std::vector<std::vector<std::byte>> keep;
  const std::vector<HostRange> r = three_spans(keep);
  {
    driver::HostPinning pin(dev, r);
    EXPECT_EQ(dev.asked, static_cast<int>(driver::page_spans(r, 4096).size()));
    EXPECT_EQ(dev.pinned.size(), driver::page_spans(r, 4096).size() - 1);
    EXPECT_EQ(pin.warning(), "");
  }
  EXPECT_EQ(dev.unpinned.size(), dev.pinned.size()) << "the span locked by someone else is not unlocked";
}

// Pinning is an optimisation: a span that cannot be locked unlocks what
// was, and the run goes on pageable with a warning; so does a failed unlock.
TEST(HostPinning, AFailureUnpinsWhatWasPinnedAndGoesOnPageable) {
  PinningDevice dev(true);
  dev.fail_at = 2;
  std::vector<std::vector<std::byte>> keep;
  {
    driver::HostPinning pin(dev, three_spans(keep));
    EXPECT_EQ(pin.bytes(), 0u);
    EXPECT_NE(pin.warning().find("left pageable"), std::string::npos) << pin.warning();
    EXPECT_NE(pin.warning().find("out of memory (test)"), std::string::npos) << pin.warning();
    ASSERT_EQ(dev.pinned.size(), 1u);
    ASSERT_EQ(dev.unpinned.size(), 1u);
    EXPECT_EQ(dev.unpinned[0], dev.pinned[0].ptr);
  }
  PinningDevice dev2(true);
  dev2.unpin_fail_at = 1;
  driver::HostPinning pin2(dev2, three_spans(keep));
  EXPECT_GT(pin2.bytes(), 0u);
  EXPECT_NO_THROW(pin2.unpin());
  EXPECT_NE(pin2.warning().find("left page-locked"), std::string::npos) << pin2.warning();
}

}  // namespace
}  // namespace tessera
