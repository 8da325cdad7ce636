/*
 * sendTile(socketFd, head, fileFd, offset, length): writes `head` (a Buffer: the HTTP response
 * head and the JPEG prefix) to a connected non-blocking TCP socket, then `length` bytes of the
 * file from `offset` with sendfile(2): the tile's bytes go from the page cache to the socket
 * without being copied through JavaScript (what nginx does with `sendfile on`).
 *
 * Returns the number of bytes written, head first. Fewer than head + length means the socket's
 * send buffer is full (EAGAIN): the caller writes the rest through Node's stream, which waits for
 * the socket to drain. A negative number is -errno of an error (the peer has gone, say); what was
 * written before it is then unknown to the caller, who closes the connection. Never blocks, never
 * raises SIGPIPE (send with MSG_NOSIGNAL; Node ignores SIGPIPE for sendfile).
 *
 * Linux only (sendfile to a socket, MSG_MORE). Built by scripts/build-native.mjs; the tile server
 * falls back to its JavaScript write path when this module is missing.
 */
#include <errno.h>
#include <node_api.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/types.h>

static napi_value fail(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

static napi_value SendTile(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 5)
    return fail(env, "sendTile(socketFd, head, fileFd, offset, length)");
  int32_t sock, file;
  int64_t offset, length;
  char *head;
  size_t head_length;
  bool is_buffer = false;
  if (napi_get_value_int32(env, argv[0], &sock) != napi_ok || sock < 0) return fail(env, "socketFd: a descriptor");
  if (napi_is_buffer(env, argv[1], &is_buffer) != napi_ok || !is_buffer ||
      napi_get_buffer_info(env, argv[1], (void **)&head, &head_length) != napi_ok)
    return fail(env, "head: a Buffer");
  if (napi_get_value_int32(env, argv[2], &file) != napi_ok || file < 0) return fail(env, "fileFd: a descriptor");
  if (napi_get_value_int64(env, argv[3], &offset) != napi_ok || offset < 0) return fail(env, "offset: >= 0");
  if (napi_get_value_int64(env, argv[4], &length) != napi_ok || length < 0) return fail(env, "length: >= 0");

  int64_t written = 0;
  while ((size_t)written < head_length) {
    /* MSG_MORE: the head waits for the tile's first bytes, so both leave in one segment. */
    ssize_t n = send(sock, head + written, head_length - (size_t)written, MSG_MORE | MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) goto done;
      written = -errno;
      goto done;
    }
    written += n;
  }
  off_t position = (off_t)offset;
  int64_t sent = 0;
  while (sent < length) {
    ssize_t n = sendfile(sock, file, &position, (size_t)(length - sent));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      written = -errno;
      goto done;
    }
    if (n == 0) break; /* the file ends before the range does: the caller sees a short count */
    sent += n;
  }
  written += sent;
done:;
  napi_value result;
  napi_create_int64(env, written, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "sendTile", NAPI_AUTO_LENGTH, SendTile, NULL, &fn);
  napi_set_named_property(env, exports, "sendTile", fn);
  return exports;
}
