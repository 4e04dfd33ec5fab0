// cuda_api.hpp for a build with CUDA: the backend lives in libtessera_cuda.so
// (cuda_module.hpp says why), loaded here the first time it is needed.
//
// Where the module is looked for, first found wins:
//   1. $TESSERA_CUDA_MODULE, a path to the file (a user's own build of it);
//   2. the directory of the running executable and its two parents (build/
//      holds the module; tessera is in build/, the test programs in
//      build/tests/ and build/tests/sim/);
//   3. the build tree this library was compiled in;
//   4. the dynamic linker's search path (LD_LIBRARY_PATH, ldconfig).
// A module that exists but cannot be loaded (its CUDA libraries missing) is
// reported with the dynamic linker's message; nothing is loaded twice.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "kernels/cuda/cuda_module.hpp"

#ifndef TESSERA_CUDA_MODULE_BUILD_PATH
#define TESSERA_CUDA_MODULE_BUILD_PATH ""
#endif

namespace tessera::kernels {
namespace {

struct Loaded {
  const CudaModule* module = nullptr;
  std::string why;  // when module is null: what was tried and what failed
};

std::vector<std::string> candidates() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  if (const char* env = std::getenv("TESSERA_CUDA_MODULE"); env && *env) {
    out.emplace_back(env);
    return out;  // the user named it: nothing else stands in for it
  }
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (int up = 0; !ec && up < 3 && !dir.empty(); ++up, dir = dir.parent_path()) {
    out.push_back((dir / kCudaModuleFile).string());
    if (dir == dir.root_path()) break;
  }
  if (*TESSERA_CUDA_MODULE_BUILD_PATH) out.emplace_back(TESSERA_CUDA_MODULE_BUILD_PATH);
  out.emplace_back(kCudaModuleFile);
  return out;
}

Loaded load() {
  Loaded r;
  std::string tried;
  for (const std::string& path : candidates()) {
    const bool bare = path.find('/') == std::string::npos;
    std::error_code ec;
    if (!bare && !std::filesystem::exists(path, ec)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      if (bare) {
        tried += (tried.empty() ? "" : ", ") + path + " on the library path";
        continue;
      }
      r.why = "the CUDA backend " + path + " cannot be loaded: " + (e ? e : "dlopen failed");
      return r;
    }
    using Entry = const CudaModule* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(h, kCudaModuleEntry));
    const CudaModule* m = entry ? entry() : nullptr;
    if (!m || m->abi != kCudaModuleAbi) {
      r.why = "the CUDA backend " + path + " is not this build's (" +
              (m ? "interface " + std::to_string(m->abi) + ", expected " + std::to_string(kCudaModuleAbi)
                 : std::string("no ") + kCudaModuleEntry) +
              ")";
      return r;
    }
    r.module = m;  // never unloaded: devices and their kernels' code live in it
    return r;
  }
  r.why = "the CUDA backend " + std::string(kCudaModuleFile) + " was not found (tried " + tried +
          "; set TESSERA_CUDA_MODULE to its path)";
  return r;
}

// The process's one loaded module: immutable once loaded, shared by every
// node runtime of the process as the dynamic linker's own tables are.
const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

const CudaModule& module_or_throw(const std::string& who) {
  const Loaded& l = loaded();
  if (!l.module) throw platform::CudaError(who + ": " + l.why);
  return *l.module;
}

}  // namespace

int cuda_device_count() {
  const Loaded& l = loaded();
  return l.module ? l.module->device_count() : 0;
}

std::string cuda_backend_unavailable() { return loaded().why; }

std::unique_ptr<platform::Device> make_cuda_device(int gpu_index, int ordinal, std::size_t memory_cap,
                                                   CudaKernelOptions options) {
  return module_or_throw("GPU " + std::to_string(gpu_index)).make_device(gpu_index, ordinal, memory_cap, options);
}

CusolverRun cusolver_factor(PeerRoutine routine, int ordinal, std::int64_t m, std::int64_t n, double* a, double* tau) {
  return module_or_throw("cuSOLVER").cusolver_d(routine, ordinal, m, n, a, tau);
}

CusolverRun cusolver_factor(PeerRoutine routine, int ordinal, std::int64_t m, std::int64_t n, float* a, float* tau) {
  return module_or_throw("cuSOLVER").cusolver_s(routine, ordinal, m, n, a, tau);
}

}  // namespace tessera::kernels
