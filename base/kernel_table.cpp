#include "base/kernel_table.hpp"

namespace tessera {

const char* kernel_name(std::uint16_t k) {
  switch (k) {
    case kPotf2p: return "POTF2'";
    case kTrsm: return "TRSM";
    case kGsmm: return "GSMM";
    case kGsmmDiag: return "GSMM_DIAG";
    case kGeqrt: return "GEQRT";
    case kLarfb: return "LARFB";
    case kTsqrt: return "TSQRT";
    case kSsrfb: return "SSRFB";
    case kLarfbQ: return "LARFB_Q";
    case kSsrfbQ: return "SSRFB_Q";
    case kNop: return "NOP";
    case kCheckQr: return "CHECK_QR";
    case kCheckGram: return "CHECK_GRAM";
    default: return "?";
  }
}

}  // namespace tessera
