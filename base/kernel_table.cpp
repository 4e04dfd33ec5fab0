#include "base/kernel_table.hpp"

#include <algorithm>
#include <array>

namespace tessera {
namespace {

using Ib = KernelIb;

// The kernel table. Flop formulas are of one call of shape m×n(×k) as the
// algorithms' *_shape functions give it (algorithms/cholesky.cpp, qr.cpp).
// The check kernels and NOP have no key: machine files cannot name them
// (NOP's "nop" excepted, which kernel models have always accepted).
constexpr KernelInfo kTable[] = {
    // Cholesky, in the order a factorization first calls them.
    {kPotf2p, "POTF2'", "potf2p",
     // Cholesky of the n×n block + TRSM of the (m-n)×n below: n³/3 + (m-n)n²
     [](double m, double n, double /*k*/) { return n * n * n / 3 + (m - n) * n * n; }, false, Ib::kNone, true,
     "cholesky"},
    {kTrsm, "TRSM", "trsm",
     // A (m×n) L^{-T}: mn²
     [](double m, double n, double /*k*/) { return m * n * n; }, false, Ib::kNone, true, "cholesky"},
    {kGsmmDiag, "GSMM_DIAG", "gsmm_diag",
     // SYRK on the n×n diagonal block + GEMM on the (m-n)×n below: n²k + 2(m-n)nk
     [](double m, double n, double k) { return n * n * k + 2 * (m - n) * n * k; }, true, Ib::kNone, true, "cholesky"},
    {kGsmm, "GSMM", "gsmm",
     // C -= A B^T: 2mnk
     [](double m, double n, double k) { return 2 * m * n * k; }, true, Ib::kNone, true, "cholesky"},
    // QR, in the order a factorization first calls them.
    {kGeqrt, "GEQRT", "geqrt",
     // Householder QR of m×n: 2mn² - 2n³/3
     [](double m, double n, double /*k*/) { return 2 * m * n * n - 2 * n * n * n / 3; }, false, Ib::kUpToN, true, "qr"},
    {kLarfb, "LARFB", "larfb",
     // apply k reflectors of an m×k panel to m×n: ≈ 4mnk - 2nk²
     [](double m, double n, double k) { return 4 * m * n * k - 2 * n * k * k; }, true, Ib::kUpToK, true, "qr"},
    {kTsqrt, "TSQRT", "tsqrt",
     // QR of [R (n×n triangular); A (m×n)]: ≈ 2mn²
     [](double m, double n, double /*k*/) { return 2 * m * n * n; }, false, Ib::kUpToN, true, "qr"},
    {kSsrfb, "SSRFB", "ssrfb",
     // apply k reflectors of [I; V (m×k)] to [A1 (k×n); A2 (m×n)]: ≈ 4mnk
     [](double m, double n, double k) { return 4 * m * n * k; }, true, Ib::kUpToK, true, "qr"},
    // Forming Q for the check: LARFB's and SSRFB's work, applying Q instead of Q^T.
    {kLarfbQ, "LARFB_Q", "larfb_q", [](double m, double n, double k) { return 4 * m * n * k - 2 * n * k * k; }, true,
     Ib::kUpToK, false, "qr"},
    {kSsrfbQ, "SSRFB_Q", "ssrfb_q", [](double m, double n, double k) { return 4 * m * n * k; }, true, Ib::kUpToK, false,
     "qr"},
    // The reduction tree across domains (--qr-tree binary): both operands
    // upper triangular (trapezoidal, m <= n rows below), so about a third of
    // TSQRT's work and half of SSRFB's when m = n = k.
    {kTtqrt, "TTQRT", "ttqrt",
     [](double m, double n, double /*k*/) { return 2 * n * m * m - 4 * m * m * m / 3 + 2 * m * (n - m) * (n - m); },
     false, Ib::kUpToN, false, "qr"},
    {kTtmqr, "TTMQR", "ttmqr",
     [](double m, double n, double k) { return m >= k ? 2 * n * k * k : 2 * n * m * m + 4 * m * n * (k - m); }, true,
     Ib::kUpToK, false, "qr"},
    {kTtmqrQ, "TTMQR_Q", "ttmqr_q",
     [](double m, double n, double k) { return m >= k ? 2 * n * k * k : 2 * n * m * m + 4 * m * n * (k - m); }, true,
     Ib::kUpToK, false, "qr"},
    {kNop, "NOP", "nop", nullptr, false, Ib::kNone, false, ""},
    // The distributed QR check's own products (algorithms/dist_check.cpp).
    {kCheckQr, "CHECK_QR", nullptr, nullptr, true, Ib::kNone, false, "qr"},
    {kCheckGram, "CHECK_GRAM", nullptr, nullptr, true, Ib::kNone, false, "qr"},
    // LU (algorithms/lu.cpp), in the order a factorization first calls them.
    // The row moves (GATHER, SCATTER, PIVOTS, SWAP, EXCHANGE) have no flop
    // count and are not calibrated: every kernel model gives them 0 s for now.
    {kLuLeaf, "LU_LEAF", "lu_leaf",
     // GEPP of m×n: mn² - n³/3
     [](double m, double n, double /*k*/) { return m * n * n - n * n * n / 3; }, false, Ib::kNone, true, "lu"},
    {kLuMerge, "LU_MERGE", "lu_merge", [](double m, double n, double /*k*/) { return m * n * n - n * n * n / 3; },
     false, Ib::kNone, true, "lu"},
    {kLuGather, "LU_GATHER", "lu_gather", nullptr, false, Ib::kNone, false, "lu"},
    {kLuPanel, "LU_PANEL", "lu_panel", [](double m, double n, double /*k*/) { return m * n * n - n * n * n / 3; },
     false, Ib::kNone, true, "lu"},
    {kLuScatter, "LU_SCATTER", "lu_scatter", nullptr, false, Ib::kNone, false, "lu"},
    {kLuPivots, "LU_PIVOTS", "lu_pivots", nullptr, false, Ib::kNone, false, "lu"},
    {kLuSwap, "LU_SWAP", "lu_swap", nullptr, false, Ib::kNone, false, "lu"},
    {kLuExchange, "LU_EXCHANGE", "lu_exchange", nullptr, false, Ib::kNone, false, "lu"},
    {kLuDiag, "LU_DIAG", "lu_diag",
     // LU without pivoting of m×n: mn² - n³/3
     [](double m, double n, double /*k*/) { return m * n * n - n * n * n / 3; }, false, Ib::kNone, true, "lu"},
    {kLuTrsmL, "LU_TRSM_L", "lu_trsm_l",
     // A (m×n) U^{-1}: mn²
     [](double m, double n, double /*k*/) { return m * n * n; }, false, Ib::kNone, true, "lu"},
    {kLuTrsmU, "LU_TRSM_U", "lu_trsm_u",
     // L^{-1} A, L m×m, A m×n: m²n
     [](double m, double n, double /*k*/) { return m * m * n; }, false, Ib::kNone, true, "lu"},
    {kLuGemm, "LU_GEMM", "lu_gemm",
     // C -= A B: 2mnk
     [](double m, double n, double k) { return 2 * m * n * k; }, true, Ib::kNone, true, "lu"},
};

constexpr bool same(const char* a, const char* b) {
  return a && b ? std::string_view(a) == std::string_view(b) : a == b;
}

// Row index by kernel id (-1: none), checked to be one row per id.
constexpr std::array<int, kKernelIdEnd> kRowOf = [] {
  std::array<int, kKernelIdEnd> row{};
  row.fill(-1);
  for (int r = 0; r < static_cast<int>(std::size(kTable)); ++r) row[kTable[r].id] = r;
  return row;
}();

constexpr bool one_row_per_id() {
  if (std::size(kTable) != kKernelIdEnd - 1) return false;
  for (int id = 1; id < kKernelIdEnd; ++id)
    if (kRowOf[id] < 0) return false;
  return true;
}
static_assert(one_row_per_id(), "the kernel table needs exactly one row per KernelId");

constexpr bool unique_names_and_keys() {
  for (std::size_t a = 0; a < std::size(kTable); ++a)
    for (std::size_t b = a + 1; b < std::size(kTable); ++b)
      if (same(kTable[a].name, kTable[b].name) || (kTable[a].key && same(kTable[a].key, kTable[b].key))) return false;
  return true;
}
static_assert(unique_names_and_keys(), "kernel names and keys must be unique");

constexpr bool calibrated_rows_complete() {
  for (const KernelInfo& r : kTable)
    if (r.calibrated && (!r.key || !r.flops || std::string_view(r.family).empty())) return false;
  return true;
}
static_assert(calibrated_rows_complete(), "a calibrated kernel needs a key, a flop formula and a family");

}  // namespace

std::span<const KernelInfo> kernel_table() { return kTable; }

const KernelInfo* kernel_info(std::uint16_t kernel) {
  return kernel < kKernelIdEnd && kRowOf[kernel] >= 0 ? &kTable[kRowOf[kernel]] : nullptr;
}

const char* kernel_name(std::uint16_t kernel) {
  const KernelInfo* r = kernel_info(kernel);
  return r ? r->name : "?";
}

const char* kernel_key(std::uint16_t kernel) {
  const KernelInfo* r = kernel_info(kernel);
  return r && r->key ? r->key : "?";
}

std::optional<std::uint16_t> kernel_from_key(std::string_view key) {
  for (const KernelInfo& r : kTable)
    if (r.key && key == r.key) return r.id;
  return std::nullopt;
}

std::uint16_t kernel_rate_proxy(std::uint16_t kernel) {
  switch (kernel) {
    case kTtqrt: return kTsqrt;
    case kTtmqr: return kSsrfb;
    case kTtmqrQ: return kSsrfbQ;
    case kLarfbQ: return kLarfb;
    case kSsrfbQ: return kSsrfb;
    default: return kernel;
  }
}

double kernel_flops(const KernelShape& s) {
  const KernelInfo* r = kernel_info(s.kernel);
  if (!r || !r->flops) return 0;
  return r->flops(static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k));
}

bool panel_kernel(std::uint16_t kernel) {
  switch (kernel) {
    case kPotf2p:
    case kTrsm:
    case kGeqrt:
    case kTsqrt:
    case kTtqrt:
    case kLuPanel:
    case kLuDiag:
    case kLuTrsmL: return true;
    default: return false;
  }
}

std::int64_t kernel_ib(std::uint16_t kernel, std::int64_t n, std::int64_t k, std::int64_t ib) {
  const KernelInfo* r = kernel_info(kernel);
  if (!r) return 0;
  switch (r->ib) {
    case KernelIb::kUpToN: return std::min(ib, n);
    case KernelIb::kUpToK: return std::min(ib, k);
    case KernelIb::kNone: break;
  }
  return 0;
}

std::vector<std::uint16_t> calibrated_kernels(std::string_view family) {
  std::vector<std::uint16_t> out;
  for (const KernelInfo& r : kTable)
    if (r.calibrated && (family.empty() || family == r.family)) out.push_back(r.id);
  return out;
}

std::vector<std::string_view> kernel_families() {
  std::vector<std::string_view> out;
  for (const KernelInfo& r : kTable)
    if (r.calibrated && std::find(out.begin(), out.end(), r.family) == out.end()) out.emplace_back(r.family);
  return out;
}

std::string kernel_keys_text(KernelKeys which) {
  std::string out;
  for (const KernelInfo& r : kTable)
    if (r.key && (which == KernelKeys::kAll || r.calibrated)) out += (out.empty() ? "" : ", ") + std::string(r.key);
  return out;
}

}  // namespace tessera
