#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

int
view_login_render(struct buf *b, const struct view_login *v)
{
	layout_begin(b, "Log in", NULL);
	HTML_LIT(b, "<h1>Admin login</h1>\n");
	if (v->error) {
		HTML_LIT(b, "<p class=\"note err\">");
		html_text_trunc(b, v->error, VIEW_NOTE_CHARS);
		HTML_LIT(b, "</p>\n");
	}
	HTML_LIT(b,
	    "<form class=\"f\" method=\"post\" action=\"/login\">"
	    "<input type=\"hidden\" name=\"csrf\" value=\"");
	html_text_trunc(b, v->csrf, 128);
	HTML_LIT(b, "\"><input type=\"hidden\" name=\"next\" value=\"");
	html_text_trunc(b, v->next ? v->next : "/regressions", 256);
	HTML_LIT(b,
	    "\"><label>admin token <input type=\"password\" "
	    "name=\"token\" size=\"40\" autocomplete=\"off\" "
	    "required></label><button>log in</button></form>\n"
	    "<p class=\"muted\">The token is the content of the "
	    "daemon's admin_token_file.</p>\n");
	return layout_end(b);
}
