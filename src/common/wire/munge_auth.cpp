#include "wire/munge_auth.h"

#include <munge.h>

#include <cstdlib>

namespace harmonics::wire {

namespace {
// A munge context per call: the daemons call this once per connection, and a
// context pointing at a test's own munged socket must not leak into others.
struct Ctx {
    munge_ctx_t ctx = munge_ctx_create();
    ~Ctx() {
        if (ctx) munge_ctx_destroy(ctx);
    }
};

bool set_socket(Ctx& c, const std::string& socket, std::string* err) {
    if (!c.ctx) {
        *err = "munge_ctx_create failed";
        return false;
    }
    if (!socket.empty() && munge_ctx_set(c.ctx, MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS) {
        *err = std::string("munge socket ") + socket + ": " + munge_ctx_strerror(c.ctx);
        return false;
    }
    return true;
}
}  // namespace

bool munge_available() { return true; }

bool munge_encode(const std::string& socket, const std::string& payload, std::string* cred,
                  std::string* err) {
    Ctx c;
    if (!set_socket(c, socket, err)) return false;
    char* out = nullptr;
    munge_err_t e = munge_encode(&out, c.ctx, payload.data(), int(payload.size()));
    if (e != EMUNGE_SUCCESS) {
        *err = std::string("munge encode: ") + munge_strerror(e);
        std::free(out);
        return false;
    }
    cred->assign(out);
    std::free(out);
    return true;
}

bool munge_decode(const std::string& socket, const std::string& cred, MungeIdentity* id,
                  std::string* err) {
    Ctx c;
    if (!set_socket(c, socket, err)) return false;
    void* buf = nullptr;
    int len = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    munge_err_t e = munge_decode(cred.c_str(), c.ctx, &buf, &len, &uid, &gid);
    if (e != EMUNGE_SUCCESS) {
        *err = std::string("munge decode: ") + munge_strerror(e);
        std::free(buf);
        return false;
    }
    id->uid = uid;
    id->gid = gid;
    id->payload.assign(static_cast<const char*>(buf), std::size_t(len > 0 ? len : 0));
    std::free(buf);
    return true;
}

}  // namespace harmonics::wire
