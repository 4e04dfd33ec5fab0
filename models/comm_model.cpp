#include "models/comm_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "base/error.hpp"
#include "base/tile_layout.hpp"
#include "runtime/distribution.hpp"

namespace tessera {

namespace {

std::string grid_text(int Pr, int Pc) { return std::to_string(Pr) + "x" + std::to_string(Pc); }

// Shared by parse_grid and validate_comm_shape so that a bad grid reads the
// same whether it came as text or as numbers.
void check_grid(int Pr, int Pc, const std::string& text) {
  if (Pr < 1) throw InputError("--grid " + text + ": Pr must be >= 1");
  if (Pc < 1) throw InputError("--grid " + text + ": Pc must be >= 1");
  // Node counts are ints everywhere (P = Pr * Pc must not wrap).
  if (static_cast<long long>(Pr) * Pc > std::numeric_limits<int>::max())
    throw InputError("--grid " + text + ": Pr * Pc = " + std::to_string(static_cast<long long>(Pr) * Pc) +
                     " nodes, more than 2^31 - 1");
}

double grid_size(const CommShape& c) { return static_cast<double>(c.Pr) * c.Pc; }

// The sums of A.2 depend on j only through #rows = n - floor(j/s)*B, so each
// value of k = floor(j/s) repeats s times. Evaluating the power sums over
// k = 0 .. N-1 exactly (N = ceil(n/B) top-level tile rows) keeps the cost
// O(1) for any n/B, where a literal loop over j would not.
struct RowSums {
  double iterations;  // N*s: how many j
  double rows;        // sum over j of #rows
  double rows_sq;     // sum over j of #rows^2
};

RowSums row_sums(const CommShape& c) {
  const double n = static_cast<double>(c.n), B = static_cast<double>(c.B), s = c.s;
  const double N = static_cast<double>(ceil_div(c.n, c.B));
  const double sum_k = N * (N - 1) / 2, sum_k2 = (N - 1) * N * (2 * N - 1) / 6;
  return {N * s, s * (N * n - B * sum_k), s * (N * n * n - 2 * n * B * sum_k + B * B * sum_k2)};
}

// Words per message (see the header): one B x (B/s) tile, or the triangle of one.
double tile_words(const CommShape& c) { return static_cast<double>(c.B) * c.B / c.s; }

void check_v(double v) {
  if (!(v >= 1)) throw InputError(fmt::format("--v {}:", v) + " the virtual tile height must be >= 1");
}

void check_nb(std::int64_t nb) {
  if (nb < 1) throw InputError("--nb " + std::to_string(nb) + ": ScaLAPACK's block size must be >= 1");
}

// The two terms of each A.2.1 per-iteration sum, in messages.
struct CholTerms {
  double diagonal, panel;
};
CholTerms chol_sum_terms(const CommShape& c) {
  validate_comm_shape(c);
  const RowSums r = row_sums(c);
  return {r.iterations * std::log2(c.Pr), r.rows / (static_cast<double>(c.B) * c.Pr) * std::log2(c.Pr + c.Pc)};
}

// The two terms of A.2.2's per-iteration sum, in messages.
struct QrTerms {
  double down, right;
};
QrTerms qr_sum_terms(const CommShape& c, double v) {
  validate_comm_shape(c);
  check_v(v);
  const RowSums r = row_sums(c);
  const double B = static_cast<double>(c.B);
  // A.2.2: no message goes down when there is no process below (Pr = 1).
  const double down = c.Pr == 1 ? 0.0 : r.rows_sq / (v * B * B * grid_size(c));
  return {down, r.rows * std::log2(c.Pc) / (B * c.Pr)};
}

// Leading-term pieces of the closed forms: n^2 s/(B^2 sqrt P) and n^3 s/(v B^3 P).
double n2s_over_b2_sqrt_p(const CommShape& c) {
  const double n = static_cast<double>(c.n), B = static_cast<double>(c.B);
  return n * n * c.s / (B * B * std::sqrt(grid_size(c)));
}

}  // namespace

void validate_comm_shape(const CommShape& c) {
  if (c.n < 1) throw InputError("--n " + std::to_string(c.n) + ": must be >= 1");
  if (c.B < 1) throw InputError("--B " + std::to_string(c.B) + ": must be >= 1");
  if (c.s < 1) throw InputError("--s " + std::to_string(c.s) + ": must be >= 1");
  check_grid(c.Pr, c.Pc, grid_text(c.Pr, c.Pc));
  if (c.B > c.n) throw InputError("--B " + std::to_string(c.B) + ": must be <= n = " + std::to_string(c.n));
  if (c.s > c.B)
    throw InputError("--s " + std::to_string(c.s) + ": must be <= B = " + std::to_string(c.B) +
                     " (a top-level tile has only B columns to partition)");
  // What a run would refuse (its message): the model of a run that cannot be.
  // It also keeps the tile rows in int and the binary tree's loop short.
  check_tile_count(c.n, c.n, c.B, c.s);
}

std::pair<int, int> parse_grid(const std::string& text) {
  const auto x = text.find('x');
  int Pr = 0, Pc = 0;
  // from_chars must consume each side whole: "2", "x3", "axb", "2x3x4" fail here.
  const auto whole_int = [](const char* first, const char* last, int& out) {
    const auto [end, ec] = std::from_chars(first, last, out);
    return first != last && ec == std::errc() && end == last;
  };
  const char* b = text.data();
  if (x == std::string::npos || !whole_int(b, b + x, Pr) || !whole_int(b + x + 1, b + text.size(), Pc))
    throw InputError("--grid " + text + ": expected PrxPc, two positive integers such as 2x3");
  check_grid(Pr, Pc, text);
  return {Pr, Pc};
}

double msg_chol_sum(const CommShape& c) {
  const CholTerms t = chol_sum_terms(c);
  return t.diagonal + t.panel;
}

double word_chol_sum(const CommShape& c) {
  const CholTerms t = chol_sum_terms(c);
  return t.diagonal * tile_words(c) / 2 + t.panel * tile_words(c);
}

double msg_chol_closed(const CommShape& c) {
  validate_comm_shape(c);
  const double lg = std::log2(grid_size(c));
  return static_cast<double>(c.n) * c.s / (2.0 * c.B) * lg + n2s_over_b2_sqrt_p(c) * (lg / 4 + 0.5);
}

double word_chol_closed(const CommShape& c) {
  validate_comm_shape(c);
  const double n = static_cast<double>(c.n), lg = std::log2(grid_size(c)), sqrt_p = std::sqrt(grid_size(c));
  return n * static_cast<double>(c.B) / 4 * lg + n * n / sqrt_p * (lg / 4 + 0.5);
}

double run_virtual_tile_height(const CommShape& c) {
  validate_comm_shape(c);
  return default_virtual_tile_height(static_cast<int>(ceil_div(c.n, c.B)), c.Pr);  // <= 2^30 rows: validated
}

double paper_virtual_tile_height(const CommShape& c) {
  validate_comm_shape(c);
  return std::max(1.0, static_cast<double>(c.n) / (static_cast<double>(c.B) * c.Pr));
}

double msg_qr_sum(const CommShape& c, double v) {
  const QrTerms t = qr_sum_terms(c, v);
  return t.down + t.right;
}

double word_qr_sum(const CommShape& c, double v) { return msg_qr_sum(c, v) * tile_words(c); }

double msg_qr_closed(const CommShape& c, double v) {
  validate_comm_shape(c);
  check_v(v);
  const double n = static_cast<double>(c.n), B = static_cast<double>(c.B), P = grid_size(c);
  return n * n * n * c.s / (3 * v * B * B * B * P) + n2s_over_b2_sqrt_p(c) / 4 * std::log2(P);
}

double word_qr_closed(const CommShape& c, double v) {
  // Every QR message is one B x (B/s) tile, so words are messages times its size.
  return msg_qr_closed(c, v) * tile_words(c);
}

double qr_binary_pairs_sends(int D) {
  // The tree of algorithms/qr_tree.cpp over heads 0 .. D-1 (0: the top
  // row's): at stride w = 1, 2, 4, ... the pairs (x, x + w) for x a
  // multiple of 2w with x + w < D. Every head but 0 is a lower operand
  // once (it forwards the upper tile it received: D - 1 sends); each head
  // that is an upper operand at least once sends its own tile out once.
  // Those are the even heads with a successor (an even x > 0 with x + 1 = D
  // has no partner at any stride), floor(D/2) of them.
  return D <= 1 ? 0 : (D - 1) + D / 2;
}

namespace {

struct BinaryTerms {
  double down = 0, right = 0;  // messages
};

BinaryTerms qr_binary_terms(const CommShape& c, double v) {
  validate_comm_shape(c);
  check_v(v);
  const std::int64_t N = ceil_div(c.n, c.B);  // tile rows: at most 2^15 (validate_comm_shape)
  const double s = c.s, Ns = static_cast<double>(N) * s, last = std::floor(static_cast<double>(N - 1) / v);
  BinaryTerms t;
  for (std::int64_t k = 0; k < N; ++k) {
    const double below = last - std::floor(static_cast<double>(k) / v) + 1;  // virtual tiles from row k on
    const int D = static_cast<int>(std::min<double>(c.Pr, below));
    const double S = qr_binary_pairs_sends(D);
    // The s narrow columns j = k s + u, u = 0 .. s-1: sum of C_j = Ns - j.
    const double columns = s * (Ns - static_cast<double>(k) * s) - s * (s - 1) / 2;
    t.down += columns / c.Pc * S / D;
    t.right += s * (static_cast<double>(N - k) / c.Pr + (D - 1.0) / D) * (c.Pc - 1.0) / c.Pc;
  }
  return t;
}

// Leading terms for D = Pr: n^2 s/(2 B^2) times each bracket's part.
BinaryTerms qr_binary_closed_terms(const CommShape& c) {
  validate_comm_shape(c);
  const double n = static_cast<double>(c.n), B = static_cast<double>(c.B), P = grid_size(c);
  const double lead = n * n * c.s / (2 * B * B);
  return {lead * c.s * qr_binary_pairs_sends(c.Pr) / P, lead * (c.Pc - 1.0) / P};
}

// A down message is one tile; a broadcast one carries its ib x (B/s) T too.
double binary_words(const CommShape& c, const BinaryTerms& t, std::int64_t ib) {
  if (ib < 1) throw InputError("--ib " + std::to_string(ib) + ": the inner blocking must be >= 1");
  const double B = static_cast<double>(c.B);
  return t.down * tile_words(c) + t.right * (B + static_cast<double>(ib)) * B / c.s;
}

}  // namespace

double msg_qr_binary_sum(const CommShape& c, double v) {
  const BinaryTerms t = qr_binary_terms(c, v);
  return t.down + t.right;
}

double word_qr_binary_sum(const CommShape& c, double v, std::int64_t ib) {
  return binary_words(c, qr_binary_terms(c, v), ib);
}

double msg_qr_binary_closed(const CommShape& c) {
  const BinaryTerms t = qr_binary_closed_terms(c);
  return t.down + t.right;
}

double word_qr_binary_closed(const CommShape& c, std::int64_t ib) {
  return binary_words(c, qr_binary_closed_terms(c), ib);
}

double pdpotrf_words(const CommShape& c, std::int64_t nb) {
  validate_comm_shape(c);
  check_nb(nb);
  const double n = static_cast<double>(c.n), P = grid_size(c);
  return (n * static_cast<double>(nb) / 4 + n * n / std::sqrt(P)) * std::log2(P);
}

double pdpotrf_messages(const CommShape& c, std::int64_t nb) {
  validate_comm_shape(c);
  check_nb(nb);
  return 3.0 * static_cast<double>(c.n) / (2.0 * static_cast<double>(nb)) * std::log2(grid_size(c));
}

double pdgeqrf_words(const CommShape& c, std::int64_t nb) {
  validate_comm_shape(c);
  check_nb(nb);
  const double n = static_cast<double>(c.n), P = grid_size(c);
  return (0.75 * n * n / std::sqrt(P) + 0.75 * n * static_cast<double>(nb)) * std::log2(P);
}

double pdgeqrf_messages(const CommShape& c, std::int64_t nb) {
  validate_comm_shape(c);
  check_nb(nb);
  return (1.5 + 2.5 / static_cast<double>(nb)) * static_cast<double>(c.n) * std::log2(grid_size(c));
}

double lower_bound_words(const CommShape& c) {
  validate_comm_shape(c);
  const double n = static_cast<double>(c.n);
  return n * n / std::sqrt(grid_size(c));
}

double lower_bound_messages(const CommShape& c) {
  validate_comm_shape(c);
  return std::sqrt(grid_size(c));
}

CommReport comm_report(CommAlgo algo, const CommShape& c, std::optional<double> v, std::optional<std::int64_t> nb,
                       const QrTreeModel& tree) {
  validate_comm_shape(c);
  CommReport r;
  r.algo = algo;
  r.shape = c;
  r.nb = nb.value_or(c.B);
  check_nb(r.nb);
  if (algo == CommAlgo::Cholesky) {
    if (v) throw InputError(fmt::format("--v {}:", *v) + " the virtual tile height applies to --algo qr only");
    if (tree.binary) throw InputError("--qr-tree binary: the reduction tree applies to --algo qr only");
    if (tree.ib) throw InputError(fmt::format("--ib {}: the inner blocking applies to --algo qr only", *tree.ib));
    r.msg_sum = msg_chol_sum(c);
    r.msg_closed = msg_chol_closed(c);
    r.word_sum = word_chol_sum(c);
    r.word_closed = word_chol_closed(c);
    r.scalapack_messages = pdpotrf_messages(c, r.nb);
    r.scalapack_words = pdpotrf_words(c, r.nb);
  } else {
    r.v = v ? *v : run_virtual_tile_height(c);
    if (tree.binary) {
      r.binary_tree = true;
      r.ib = tree.ib.value_or(32);
      r.msg_sum = msg_qr_binary_sum(c, r.v);
      r.msg_closed = msg_qr_binary_closed(c);
      r.word_sum = word_qr_binary_sum(c, r.v, r.ib);
      r.word_closed = word_qr_binary_closed(c, r.ib);
    } else {
      if (tree.ib)
        throw InputError(fmt::format("--ib {}: the inner blocking enters only the --qr-tree binary model", *tree.ib));
      r.msg_sum = msg_qr_sum(c, r.v);
      r.msg_closed = msg_qr_closed(c, r.v);
      r.word_sum = word_qr_sum(c, r.v);
      r.word_closed = word_qr_closed(c, r.v);
    }
    r.scalapack_messages = pdgeqrf_messages(c, r.nb);
    r.scalapack_words = pdgeqrf_words(c, r.nb);
  }
  r.lower_bound_messages = lower_bound_messages(c);
  r.lower_bound_words = lower_bound_words(c);
  return r;
}

}  // namespace tessera
