package engine

import "github.com/sandtray/sandtray/engine/config"

// The [pool] defaults and bounds that pool_test.go checks validation with.
const maxPoolSize, maxPoolTotal = config.MaxPoolSize, config.MaxPoolTotal

func defaultPoolConfig() config.Pool { return config.Default().Pool }
