#pragma once
// Files a command reads (--input, --machine, --base, --tuned): a regular
// file or a pipe (`--input <(zcat a.mtx.gz)`, read once). A directory opens
// as a stream on Linux and fails only on the first read, with the library's
// words; a device such as /dev/zero is read forever. Both are refused first,
// naming the option and the path.
#include <string>

namespace tessera {

// Throws InputError "OPTION PATH: ..." unless `path` names an existing
// regular file or FIFO (a link to one counts).
void require_regular_file(const std::string& option, const std::string& path);

// The whole text of the file `path` (require_regular_file first);
// InputError naming the option when it cannot be read.
std::string read_text_file(const std::string& option, const std::string& path);

}  // namespace tessera
