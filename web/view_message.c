#include "web/html.h"
#include "web/layout.h"
#include "web/views.h"

int
view_message_render(struct buf *b, const struct view_message *v)
{
	layout_begin(b, v->title ? v->title : "perfwatch", NULL);
	HTML_LIT(b, "<h1>");
	if (v->status > 0) {
		html_int(b, v->status);
		HTML_LIT(b, " ");
	}
	html_text_trunc(b, v->title, VIEW_TITLE_CHARS);
	HTML_LIT(b, "</h1>\n<p>");
	html_text_trunc(b, v->text, VIEW_NOTE_CHARS);
	HTML_LIT(b, "</p>\n<p><a href=\"/\">Overview</a></p>\n");
	return layout_end(b);
}
