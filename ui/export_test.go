package ui

// Seams for the external end-to-end test (package ui_test), which cannot
// reach the harness's unexported hooks.

// DispatchForTest routes the UI's Fyne-goroutine and background work through
// do, so a test can run it on its own goroutine, race-free.
func (u *UI) DispatchForTest(do func(func())) { u.do, u.queue, u.spawn = do, do, do }

// SelectRowForTest selects a row of the sandbox list as a click would.
func (u *UI) SelectRowForTest(row int) { u.list.list.Select(row) }

// SelectTabForTest selects a tab of the detail pane as a click would.
func (u *UI) SelectTabForTest(name string) {
	for _, item := range u.detail.tabs.Items {
		if item.Text == name {
			u.detail.tabs.Select(item)
		}
	}
}
