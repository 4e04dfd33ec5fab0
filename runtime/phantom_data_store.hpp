#pragma once
// The DataStore of a simulated run without data (000 §5.5's tables hold no
// tile): messages and device copies carry only their modeled size.
#include <cstddef>
#include <functional>
#include <utility>

#include "runtime/node_runtime.hpp"

namespace tessera {

// A simulated run without data: messages carry only their size.
class PhantomDataStore final : public DataStore {
 public:
  PhantomDataStore(std::function<std::size_t(DataId)> bytes, std::size_t word_bytes)
      : bytes_(std::move(bytes)), word_bytes_(word_bytes) {}
  bool has_data() const override { return false; }
  std::size_t bytes(DataId d) const override { return bytes_(d); }
  std::size_t word_bytes() const override { return word_bytes_; }
  void pack(DataId, std::byte*) const override {}
  void unpack_own(DataId, const std::byte*) override {}
  void adopt_alien(DataId, platform::Message&&) override {}
  void release_alien(DataId) override {}
  void host_ranges(DataId, std::vector<platform::HostRange>&) override {}
  void point_at(DataId, std::byte*) override {}

 private:
  std::function<std::size_t(DataId)> bytes_;
  std::size_t word_bytes_;
};

}  // namespace tessera
