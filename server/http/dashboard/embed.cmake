# Turns the dashboard's page into a C++ source: index.html with dashboard.css and
# dashboard.js put in place of its /*STYLE*/ and /*SCRIPT*/ markers, as one raw string.
# Run as: cmake -DSOURCE_DIR=<dashboard dir> -DOUTPUT=<file.cc> -P embed.cmake
file(READ "${SOURCE_DIR}/index.html" page)
file(READ "${SOURCE_DIR}/dashboard.css" style)
file(READ "${SOURCE_DIR}/dashboard.js" script)
string(REPLACE "/*STYLE*/" "${style}" page "${page}")
string(REPLACE "/*SCRIPT*/" "${script}" page "${page}")
string(FIND "${page}" ")stave_dashboard\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "the dashboard contains the raw string's delimiter")
endif()
# Split into chunks: compilers limit the length of one string literal.
set(body "")
string(LENGTH "${page}" length)
set(offset 0)
while(offset LESS length)
  string(SUBSTRING "${page}" ${offset} 8000 chunk)
  string(APPEND body "    R\"stave_dashboard(${chunk})stave_dashboard\"\n")
  math(EXPR offset "${offset} + 8000")
endwhile()
file(WRITE "${OUTPUT}.tmp"
"// Generated from server/http/dashboard/ by embed.cmake; do not edit.\n"
"#include \"server/http/dashboard_page.h\"\n\n"
"namespace stave::server::http {\n\n"
"std::string_view DashboardHtml() {\n"
"  static constexpr char kPage[] =\n${body};\n"
"  return std::string_view(kPage, sizeof(kPage) - 1);\n"
"}\n\n"
"}  // namespace stave::server::http\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
