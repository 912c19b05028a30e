package autostart

import "os"

// defaultStore is the user's LaunchAgent.
func defaultStore() (store, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	return launchAgent{path: launchAgentPath(home)}, nil
}
