package pluginhost

// SetAfterVerify installs a function that runs between a plugin binary's
// checks and its execution, so a test can swap the file in that window.
func SetAfterVerify(h *Plugins, f func(path string)) { h.afterVerify = f }
