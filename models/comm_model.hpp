#pragma once
// Communication-cost model of the distributed heterogeneous tile Cholesky and
// QR factorizations (000 App. A.2) and the rows of 000 Table 1 they are
// compared with (ScaLAPACK PDPOTRF/PDGEQRF and the lower bounds).
//
// The model counts, for the process that communicates most, how many
// messages it sends and how many words (matrix elements, not bytes) those
// messages carry. Multiply words by the element size (8 in double) for bytes.
//
// Symbols (000 App. A.2):
//   n      matrix order (square matrix)
//   B      top-level tile size of the multi-level block-cyclic distribution
//   s      partitions of each top-level tile: every top-level tile column is
//          factored as s narrow columns, so there are (n/B)*s iterations j
//   Pr,Pc  process grid Pr x Pc, one process per node; P = Pr*Pc
//   v      QR only: tiles stacked into one virtual tile of height v*B that
//          stays on one host or GPU (A.2.2); default n/(B*Pr), at least 1
//   nb     ScaLAPACK's block size b in Table 1's PDPOTRF/PDGEQRF rows
//          (a parameter of the peer, not of tessera); default B
//   log    base 2: every broadcast is a binary tree (A.2), so reaching k
//          processes costs log2(k) messages on the critical path
//
// Two forms of each tessera count:
//   *_sum     the per-iteration sum of A.2.1/A.2.2 over j = 0 .. (n/B)s-1,
//             with Pr and Pc kept apart, evaluated exactly (power sums of
//             #rows = n - floor(j/s)*B, not the paper's leading terms);
//   *_closed  the paper's final expression in P and sqrt(P), derived for a
//             square grid Pr = Pc = sqrt(P), leading terms only.
// The two agree to within O(B/n) for square grids (see the tests); for small
// n/B the sum keeps the lower-order terms (sum of k for k = 1..n/B is
// (n/B)(n/B+1)/2, not (n/B)^2/2) and for non-square grids it keeps Pr and Pc
// apart, so they differ there by design.
//
// Interpretations of the paper (where it does not say, this is what we chose):
//   - log2(1) = 0: on a 1 x Pc grid there is no broadcast down the panel.
//   - #rows/(B*Pr) and the virtual-tile counts are not rounded to whole tiles:
//     the paper's model is continuous, so counts are real numbers.
//   - When B does not divide n the sum runs over ceil(n/B) top-level tile
//     rows, the last one shorter (#rows = n - k*B > 0); the closed forms use
//     n/B as a real number.
//   - Word weights (the paper gives word_chol and word_qr only in closed
//     form): a panel message carries one B x (B/s) tile, B^2/s words; the
//     Cholesky diagonal-block broadcast carries the triangle of one
//     B x (B/s) block, B^2/(2s) words. These are the weights that reproduce
//     the paper's closed forms term by term.
//   - QR's message down to the process below is dropped when Pr = 1, as
//     A.2.2 says in words; the summation form applies that rule, the closed
//     form (a function of P only, assuming Pr = Pc) is kept as printed.
//   - word_qr_closed uses the first line of A.2.2's word expression,
//     n^3/(3vBP) + n^2/(4 sqrt P) log P; the factored form below it (and
//     Table 1's) divides by log P and is undefined at P = 1.
//   - P = 1 is not a distributed run (nothing is sent), but the formulas are
//     evaluated as written: both Cholesky forms still count log2(Pr+Pc) =
//     log2(2) = 1 per panel tile (closed form: the n^2 s/(2B^2 sqrt P) term);
//     QR's sum is 0 (Pr = 1, log2(Pc) = 0) while its closed form keeps
//     n^3 s/(3vB^3); the ScaLAPACK rows are 0 (log 1 = 0).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace tessera {

// One configuration of the model. Every function below validates it and
// throws InputError naming the command-line option and its value.
struct CommShape {
  std::int64_t n = 0;
  std::int64_t B = 0;
  int s = 1;
  int Pr = 1;
  int Pc = 1;
};

// Throws InputError when n, B, s, Pr or Pc is < 1, B > n, s > B, or the
// shape has more tiles than a run can name (ceil(n/B)^2 s > 2^30: the run's
// refusal, base/tile_layout.hpp check_tile_count).
void validate_comm_shape(const CommShape& c);

// "PrxPc" -> {Pr, Pc}, both >= 1 ("2x3"); anything else ("2", "x3", "0x2",
// "2x-1", "axb") throws InputError naming --grid and the text.
std::pair<int, int> parse_grid(const std::string& text);

// A.2.1: msg_chol, first line (sum) and third line (closed form).
double msg_chol_sum(const CommShape& c);
double msg_chol_closed(const CommShape& c);
// A.2.1: word_chol; the sum weights msg_chol's terms by message size.
double word_chol_sum(const CommShape& c);
double word_chol_closed(const CommShape& c);

// The virtual tile height of A.2.2's analysis, v = n/(B*Pr), at least 1.
double paper_virtual_tile_height(const CommShape& c);
// The virtual tile height `tessera run` uses by default for this shape
// (default_virtual_tile_height of runtime/distribution.hpp on ceil(n/B) tile
// rows): what comm_report evaluates A.2.2 at unless given v.
double run_virtual_tile_height(const CommShape& c);
// A.2.2: msg_qr, first line (sum) and fourth line (closed form); v >= 1
// (InputError naming --v otherwise).
double msg_qr_sum(const CommShape& c, double v);
double msg_qr_closed(const CommShape& c, double v);
// A.2.2: word_qr; the sum weights msg_qr's terms by message size.
double word_qr_sum(const CommShape& c, double v);
double word_qr_closed(const CommShape& c, double v);

// tessera's hierarchical QR (`--qr-tree binary`, algorithms/qr_tree.hpp),
// which A.2 does not cover: each node row's tiles of a column reduced by a
// flat chain on that node (no message), the node rows' D heads then pairwise
// by TTQRT/TTMQR in a binary tree rooted at the top row's node row. Counted
// for the average node of a node row taking part (`validate_comm --qr-tree
// binary`, 27 grids x sizes: the busiest node sends 1.00-1.20x the
// messages and 1.00-1.30x the words, 1.10x at most at N = 16384), summed
// over the narrow columns j, with R_j tile rows at or below the diagonal,
// C_j narrow columns from j on and D_j = min(Pr, the virtual tiles among
// those rows):
//   down:  per narrow column from j on that the node owns (C_j/Pc), the
//          S(D_j)/D_j messages a head sends for it: S(D) = (D - 1) + the
//          heads that are the upper operand of at least one pair. Each pair
//          (a, b) runs at b's node (b's tile is its main output), so a's
//          tile goes to b's node: sent first by a's node, then onward by
//          each partner, and home by the last one;
//   right: the node's R_j/Pr tiles of column j plus, for a lower operand
//          b, its TTQRT reflector ((D_j - 1)/D_j on average), each sent to
//          the Pc - 1 other node columns by a binomial tree: (Pc - 1)/Pc
//          sends per tile for the average node (A.2 counts the root's
//          log2 Pc instead).
// Words: a down message is one B x (B/s) tile, a right one carries its
// ib x (B/s) T factor as well. Closed form: the leading terms for
// D_j = Pr, n^2 s/(2B^2) (s S(Pr)/(Pr Pc) + (Pc - 1)/(Pr Pc)) messages.
// With one node row (Pr = 1) it is the flat tree's protocol count.
double qr_binary_pairs_sends(int D);  // S(D)
double msg_qr_binary_sum(const CommShape& c, double v);
double word_qr_binary_sum(const CommShape& c, double v, std::int64_t ib);
double msg_qr_binary_closed(const CommShape& c);
double word_qr_binary_closed(const CommShape& c, std::int64_t ib);

// Table 1, ScaLAPACK rows with block size nb >= 1 (InputError naming --nb otherwise).
double pdpotrf_words(const CommShape& c, std::int64_t nb);
double pdpotrf_messages(const CommShape& c, std::int64_t nb);
double pdgeqrf_words(const CommShape& c, std::int64_t nb);
double pdgeqrf_messages(const CommShape& c, std::int64_t nb);

// Table 1, lower bounds (Cholesky and QR alike): the leading terms inside
// Omega(), n^2/sqrt(P) words and sqrt(P) messages, constants unknown.
double lower_bound_words(const CommShape& c);
double lower_bound_messages(const CommShape& c);

enum class CommAlgo { Cholesky, Qr };

// Every row of `tessera model comm` for one configuration.
struct CommReport {
  CommAlgo algo = CommAlgo::Cholesky;
  bool binary_tree = false;  // QR's --qr-tree binary: tessera's own model above, not A.2.2
  std::int64_t ib = 0;       // its T factors' inner blocking (0 otherwise)
  CommShape shape;
  double v = 0;                                                       // QR's virtual tile height used (0 for Cholesky)
  std::int64_t nb = 0;                                                // ScaLAPACK block size used
  double msg_sum = 0, msg_closed = 0, word_sum = 0, word_closed = 0;  // tessera (A.2.1 or A.2.2)
  double scalapack_messages = 0, scalapack_words = 0;                 // PDPOTRF or PDGEQRF (Table 1)
  double lower_bound_messages = 0, lower_bound_words = 0;             // Table 1
};

// An empty v or nb means "not given": the defaults above. A v given for
// Cholesky is an InputError (it has no virtual tiles), as is a binary tree
// or an ib for Cholesky, or an ib without the binary tree; ib defaults to 32,
// tessera run's.
struct QrTreeModel {
  bool binary = false;
  std::optional<std::int64_t> ib;
};
CommReport comm_report(CommAlgo algo, const CommShape& c, std::optional<double> v, std::optional<std::int64_t> nb,
                       const QrTreeModel& tree = {});

}  // namespace tessera
