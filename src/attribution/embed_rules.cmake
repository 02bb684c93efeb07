# Turns data/attribution-rules.json into a C++ source, so the binary carries
# its default rules and works with no data files beside it.
file(READ "${INPUT}" content)
file(WRITE "${OUTPUT}" "// Generated from data/attribution-rules.json; do not edit.\n"
  "namespace imgsmith {\nextern const char* const kBuiltinRulesJson;\n"
  "const char* const kBuiltinRulesJson = R\"imgsmith_rules(${content})imgsmith_rules\";\n}\n")
