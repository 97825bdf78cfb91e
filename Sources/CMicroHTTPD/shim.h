#ifndef HEARTH_CMICROHTTPD_SHIM_H
#define HEARTH_CMICROHTTPD_SHIM_H
#include <sys/types.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <string.h>
#include <microhttpd.h>

/* Everything Hearth sets on a daemon; zero means "library default". */
struct hearth_mhd_config {
    unsigned int thread_pool_size;
    unsigned int connection_limit;
    unsigned int connection_timeout_seconds;
    size_t connection_memory_limit;
    const struct sockaddr *bind_address;   /* NULL: any address */
    const char *tls_cert_pem;              /* NULL: plain HTTP */
    const char *tls_key_pem;
    /* Called as connections start and close (MHD_OPTION_NOTIFY_CONNECTION); NULL: none. */
    MHD_NotifyConnectionCallback notify_connection;
    void *notify_connection_cls;
};

/* Leaves a URI or query argument as sent. Hearth reads the raw target (the URI logger) and decodes it
 * itself; libmicrohttpd's own %HH decoding of the path and of every query argument was work nobody
 * read (~2,900 instructions per presigned S3 GET: MHD_http_unescape over its ~400-byte query). */
static inline size_t hearth_mhd_keep_escaped(void *cls, struct MHD_Connection *connection, char *s)
{
    (void) cls;
    (void) connection;
    return strlen(s);
}

/* MHD_start_daemon is variadic: the options go through one MHD_OPTION_ARRAY built here. */
static inline struct MHD_Daemon *
hearth_mhd_start_daemon(unsigned int flags, uint16_t port,
                        MHD_AccessHandlerCallback handler, void *handler_cls,
                        MHD_RequestCompletedCallback completed, void *completed_cls,
                        void *(*uri_logger)(void *cls, const char *uri, struct MHD_Connection *connection),
                        void *uri_logger_cls,
                        const struct hearth_mhd_config *config)
{
    struct MHD_OptionItem options[16];
    int n = 0;
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t) completed, completed_cls };
    /* The URI logger sees the request target before MHD unescapes it: SigV4 needs the raw bytes. */
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_URI_LOG_CALLBACK, (intptr_t) uri_logger, uri_logger_cls };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t) hearth_mhd_keep_escaped, NULL };
    if (config->thread_pool_size > 1)
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, config->thread_pool_size, NULL };
    if (config->connection_limit)
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, config->connection_limit, NULL };
    if (config->connection_timeout_seconds)
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, config->connection_timeout_seconds, NULL };
    if (config->connection_memory_limit)
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t) config->connection_memory_limit, NULL };
    if (config->bind_address)
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *) config->bind_address };
    if (config->tls_cert_pem && config->tls_key_pem) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *) config->tls_cert_pem };
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *) config->tls_key_pem };
    }
    if (config->notify_connection)
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t) config->notify_connection, config->notify_connection_cls };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/* MHD_get_daemon_info is variadic; we only ask for the bound port. */
static inline uint16_t hearth_mhd_daemon_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/* MHD_get_connection_info is variadic; we ask for the client address. */
static inline const struct sockaddr *hearth_mhd_client_address(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info ? info->client_addr : NULL;
}

/* Whether the connection is TLS (the protocol is non-zero over TLS). */
static inline int hearth_mhd_connection_is_tls(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_PROTOCOL);
    return info ? (info->protocol != 0) : 0;
}

/* The connection's socket (MHD_get_connection_info is variadic); -1 when unknown. */
static inline int hearth_mhd_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/* What the connection-notify callback stored for the connection (MHD_get_connection_info is
 * variadic); NULL when nothing was. */
static inline void *hearth_mhd_socket_context(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

static inline uint64_t hearth_mhd_size_unknown(void) { return MHD_SIZE_UNKNOWN; }
static inline ssize_t hearth_mhd_reader_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }
static inline ssize_t hearth_mhd_reader_end_with_error(void) { return MHD_CONTENT_READER_END_WITH_ERROR; }

/* Collects header fields through the iterator callback into the caller's context. */
typedef void (*hearth_header_sink)(void *context, const char *name, size_t name_len, const char *value, size_t value_len);
struct hearth_header_walk { hearth_header_sink sink; void *context; };
static inline enum MHD_Result hearth_header_iterator(void *cls, enum MHD_ValueKind kind,
                                                     const char *key, size_t key_size,
                                                     const char *value, size_t value_size)
{
    (void) kind;
    struct hearth_header_walk *walk = (struct hearth_header_walk *) cls;
    walk->sink(walk->context, key, key_size, value, value ? value_size : 0);
    return MHD_YES;
}
static inline void hearth_mhd_headers(struct MHD_Connection *connection, hearth_header_sink sink, void *context)
{
    struct hearth_header_walk walk = { sink, context };
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, hearth_header_iterator, &walk);
}
#endif
