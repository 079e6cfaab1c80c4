#pragma once

#include <string_view>

namespace stave::server::http {

/// The admin dashboard: one self-contained HTML page (its script and styles inline, no
/// external resources), embedded into the binary at build time from http/dashboard/.
std::string_view DashboardHtml();

}  // namespace stave::server::http
