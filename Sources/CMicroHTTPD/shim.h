#ifndef HLSCAP_CMICROHTTPD_SHIM_H
#define HLSCAP_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

/* MHD_start_daemon is variadic, which Swift cannot call: the options hlscap sets, as parameters. A NULL
   key starts a plain HTTP daemon; `notify` hears every connection open and close (for the header
   deadline). HTTPS speaks TLS 1.2 and 1.3 only (GnuTLS priorities). */
#define HLSCAP_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

static inline struct MHD_Daemon *hlscap_mhd_start(unsigned int flags, const struct sockaddr *address,
                                                  MHD_AccessHandlerCallback handler, void *handler_context,
                                                  MHD_RequestCompletedCallback completed, void *completed_context,
                                                  MHD_NotifyConnectionCallback notify, void *notify_context,
                                                  unsigned int connection_limit, unsigned int timeout_seconds,
                                                  size_t connection_memory_limit,
                                                  const char *tls_key, const char *tls_cert) {
    if (tls_key != NULL && tls_cert != NULL) {
        return MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, handler, handler_context,
                                MHD_OPTION_SOCK_ADDR, address,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                                MHD_OPTION_NOTIFY_CONNECTION, notify, notify_context,
                                MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                                MHD_OPTION_HTTPS_MEM_KEY, tls_key,
                                MHD_OPTION_HTTPS_MEM_CERT, tls_cert,
                                MHD_OPTION_HTTPS_PRIORITIES, HLSCAP_TLS_PRIORITIES,
                                MHD_OPTION_END);
    }
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, notify_context,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_END);
}

/* Macros Swift cannot import (casts): the size of a body still being made (sent in chunks), and what a
   content reader returns at the end of such a body, or when it can never be finished. */
static const uint64_t hlscap_mhd_size_unknown = MHD_SIZE_UNKNOWN;
static const ssize_t hlscap_mhd_reader_end = MHD_CONTENT_READER_END_OF_STREAM;
static const ssize_t hlscap_mhd_reader_error = MHD_CONTENT_READER_END_WITH_ERROR;

/* The port the daemon listens on, once started (port 0 asks the kernel for a free one). */
static inline uint16_t hlscap_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/* Connections the daemon holds now. */
static inline unsigned int hlscap_mhd_connection_count(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info == NULL ? 0 : info->num_connections;
}

/* A connection's socket; valid until the connection's close is notified. */
static inline int hlscap_mhd_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* The client's address (an IPv4 or IPv6 socket address), or NULL. */
static inline const struct sockaddr *hlscap_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

#endif
