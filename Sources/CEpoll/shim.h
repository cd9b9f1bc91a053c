#ifndef HLSCAP_CEPOLL_SHIM_H
#define HLSCAP_CEPOLL_SHIM_H

/* Linux's epoll and eventfd, which Glibc's Swift module leaves out, for the HTTPS server's loop. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

/* accept4 is declared only under _GNU_SOURCE: a new connection's socket, non-blocking and closed on exec. */
static inline int hlscap_accept_nonblocking(int listener, struct sockaddr *address, socklen_t *length) {
    extern int accept4(int, struct sockaddr *, socklen_t *, int);
    return accept4(listener, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

#endif
