/*
 * http.c - libcurl's easy interface, one handle per server so that its
 * connection is reused.  What goes wrong is said in the user's terms
 * (cannot connect, the answer was cut short), curl's own text after it.
 */
#include "store/http.h"

#include "core/error.h"

#include <curl/curl.h>
#include <string.h>

#define ERROR_BODY_MAX 4096

struct fk_http {
	CURL *curl;
	char *base;		/* "http://HOST:PORT" */
	char *server;		/* display URL */
	char *user, *password;
	char *ca_file;
	bool tls;
};

struct transfer {
	struct fk_http *h;
	const struct fk_http_request *rq;
	struct fk_http_reply *rep;
	GError *stop_err;	/* why the source or the sink stopped */
	bool status_known;
};

static void global_init(void)
{
	static gsize done;

	if (g_once_init_enter(&done)) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		g_once_init_leave(&done, 1);
	}
}

struct fk_http *fk_http_new(const struct fk_store_url *u)
{
	struct fk_http *h = g_new0(struct fk_http, 1);

	global_init();
	h->curl = curl_easy_init();
	h->base = g_strdup(u->base);
	h->server = g_strdup(u->display);
	h->user = g_strdup(u->user);
	h->password = g_strdup(u->password);
	h->ca_file = g_strdup(u->ca_file);
	h->tls = u->tls;
	return h;
}

void fk_http_free(struct fk_http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	if (h->password)
		memset(h->password, 0, strlen(h->password));
	g_free(h->base);
	g_free(h->server);
	g_free(h->user);
	g_free(h->password);
	g_free(h->ca_file);
	g_free(h);
}

const char *fk_http_server(const struct fk_http *h)
{
	return h->server;
}

void fk_http_reply_release(struct fk_http_reply *rep)
{
	if (rep->body)
		g_string_free(rep->body, TRUE);
	rep->body = NULL;
	rep->status = 0;
}

void fk_http_escape(GString *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (g_ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
			g_string_append_c(out, (char)c);
		} else {
			g_string_append_c(out, '%');
			g_string_append_c(out, hex[c >> 4]);
			g_string_append_c(out, hex[c & 15]);
		}
	}
}

static size_t on_body(char *buf, size_t size, size_t nmemb, void *p)
{
	struct transfer *t = p;
	size_t len = size * nmemb;

	if (!t->status_known) {
		curl_easy_getinfo(t->h->curl, CURLINFO_RESPONSE_CODE, &t->rep->status);
		t->status_known = true;
	}
	if (t->rep->status != 200) {
		if (!t->rep->body)
			t->rep->body = g_string_new(NULL);
		if (t->rep->body->len < ERROR_BODY_MAX)
			g_string_append_len(t->rep->body, buf,
					    (gssize)MIN(len, ERROR_BODY_MAX - t->rep->body->len));
		return len;
	}
	if (t->rq->sink && t->rq->sink(buf, len, t->rq->sink_data, &t->stop_err) < 0)
		return len == 0 ? 1 : 0;	/* anything but len aborts */
	return len;
}

static size_t on_read(char *buf, size_t size, size_t nmemb, void *p)
{
	struct transfer *t = p;
	long n = t->rq->source(buf, size * nmemb, t->rq->source_data, &t->stop_err);

	return n < 0 ? CURL_READFUNC_ABORT : (size_t)n;
}

/* What a failed transfer means for the user. */
static const char *explain(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		return "cannot connect (is the server running, and on this port?)";
	case CURLE_COULDNT_RESOLVE_HOST:
		return "cannot resolve the host name";
	case CURLE_OPERATION_TIMEDOUT:
		return "timed out";
	case CURLE_GOT_NOTHING:
		return "the server closed the connection without an answer";
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
		return "the answer was cut short";
	case CURLE_SEND_ERROR:
		return "the connection broke while sending";
	case CURLE_PEER_FAILED_VERIFICATION:
		return "its TLS certificate is not trusted";
	case CURLE_SSL_CONNECT_ERROR:
		return "the TLS handshake failed";
	default:
		return "the request failed";
	}
}

int fk_http_send(struct fk_http *h, const struct fk_http_request *rq, struct fk_http_reply *rep,
		 GError **err)
{
	struct transfer t = { .h = h, .rq = rq, .rep = rep };
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL;
	char *url = g_strconcat(h->base, rq->path, NULL);
	CURL *c = h->curl;
	CURLcode rc;

	memset(rep, 0, sizeof(*rep));
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	/* an answer that stops for ten minutes is given up */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 600L);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	if (h->tls && h->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, h->ca_file);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	if (rq->source) {
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, &t);
		curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, 1L << 20);
		headers = curl_slist_append(headers, "Transfer-Encoding: chunked");
	} else {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, rq->len ? rq->body : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
	/* no "Expect: 100-continue" round trip before a large body */
	headers = curl_slist_append(headers, "Expect:");
	if (rq->ctype) {
		char *ct = g_strconcat("Content-Type: ", rq->ctype, NULL);

		headers = curl_slist_append(headers, ct);
		g_free(ct);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	if (h->user) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERNAME, h->user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, h->password ? h->password : "");
	}
	rc = curl_easy_perform(c);
	curl_slist_free_all(headers);
	g_free(url);
	if (rc == CURLE_OK && !t.status_known)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &rep->status);
	if ((rc == CURLE_WRITE_ERROR || rc == CURLE_ABORTED_BY_CALLBACK) && t.stop_err) {
		g_propagate_error(err, t.stop_err);
		fk_http_reply_release(rep);
		return -1;
	}
	if (t.stop_err)
		g_error_free(t.stop_err);
	if (rc != CURLE_OK) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: %s (%s)", h->server, explain(rc),
			    *errbuf ? errbuf : curl_easy_strerror(rc));
		fk_http_reply_release(rep);
		return -1;
	}
	return 0;
}
