package engine

import "github.com/sandtray/sandtray/engine/internal/run"

// Languages lists the names execute_code accepts, for messages and schemas.
func Languages() []string { return run.Languages() }

// LanguageAliases maps the other spellings execute_code accepts (py, node,
// c++ …) to their language's name.
func LanguageAliases() map[string]string { return run.LanguageAliases() }
