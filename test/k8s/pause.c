/*
 * The pod sandbox's first process: it holds the pod's namespaces open,
 * reaps the zombies of processes that exec left behind, and exits at once
 * on SIGTERM or SIGINT. Built with gcc -static into a one-file image, as
 * no registry is reachable to pull the usual pause image from.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) { (void)sig; _exit(0); }

static void reap(int sig) {
	(void)sig;
	while (waitpid(-1, 0, WNOHANG) > 0) {
	}
}

int main(void) {
	struct sigaction down = {.sa_handler = stop};
	struct sigaction child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP | SA_RESTART};
	sigaction(SIGTERM, &down, 0);
	sigaction(SIGINT, &down, 0);
	sigaction(SIGCHLD, &child, 0);
	for (;;)
		pause();
}
