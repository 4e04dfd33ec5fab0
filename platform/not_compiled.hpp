#pragma once
// Thrown by a backend that was left out at configure time: the binary still
// links (the backend is a stub) and fails with this message when chosen.
#include <stdexcept>
#include <string>

namespace tessera::platform {

class NotCompiled : public std::runtime_error {
 public:
  explicit NotCompiled(const std::string& backend)
      : std::runtime_error("tessera was built without " + backend + " (reconfigure with -DTESSERA_WITH_" + upper(backend) +
                           "=ON once it is installed)") {}

 private:
  static std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    return s;
  }
};

}  // namespace tessera::platform
