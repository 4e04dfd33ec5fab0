#pragma once
// Which compute stream (lane) of a device takes a task's kernels, for every
// device with several (platform/device.hpp kernel_streams): a CUDA GPU's
// streams (kernels/cuda/cuda_device.cpp) and a simulated GPU's
// (platform/simgrid/sim_gpu.cpp) choose alike, so that a simulated run puts
// the same tasks side by side as the real one.
//
// One lane: every task on it. Several: a panel (base/kernel_table.hpp
// panel_kernel) on lane 0, the high-priority one, unless a task is
// outstanding there already (the panels of a column are independent: one
// then goes beside it); any other task, or such a panel, on the lane among
// 1 .. lanes - 1 with the fewest tasks outstanding, the next in turn among
// equals (`turn` advances with every task: the device's next mark), so that
// tasks queued one after the other spread over the lanes although they
// retire in any order.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

namespace tessera::platform {

// busy[l]: the tasks outstanding on lane l (busy.size() lanes, at least 1).
inline std::size_t choose_lane(bool panel, std::span<const int> busy, std::uint64_t turn) {
  if (busy.empty()) throw std::logic_error("choose_lane: a device without compute streams");
  if (busy.size() == 1 || (panel && busy[0] == 0)) return 0;
  const std::size_t others = busy.size() - 1;
  std::size_t lane = 1 + static_cast<std::size_t>(turn % others);
  for (std::size_t k = 1; k < others; ++k) {
    const std::size_t l = 1 + (static_cast<std::size_t>(turn) + k) % others;
    if (busy[l] < busy[lane]) lane = l;
  }
  return lane;
}

}  // namespace tessera::platform
