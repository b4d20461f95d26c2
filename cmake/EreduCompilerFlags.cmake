# Warning and sanitizer flags shared by every eredu target.
include_guard(GLOBAL)

add_library(eredu_warnings INTERFACE)
target_compile_options(eredu_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${EREDU_WARNINGS_AS_ERRORS}>>:-Werror>)

if(EREDU_SANITIZE)
  add_compile_options(-fsanitize=${EREDU_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${EREDU_SANITIZE})
endif()
