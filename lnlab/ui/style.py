"""The app's CSS: every page, and presenter mode on top.

Presenter mode is sized for a projector at 1024 x 768: no sidebar or header, body text about
21 px, tables and captions 16 px, and compact spacing so one slide fits one screen. (Tables
were meant to be 18 px, but the page's CSS, sent after presenter mode's, set them back to
16 px, and every slide was made to fit so; in the page's HTML presenter mode's rules come
last, so a rule for 18 px would now apply and push tables off the slides.)

Text stands at least 4.5:1 against the page in Streamlit's light and dark themes: captions and
padding cells are the text colour at 80 % and 75 % opacity (Streamlit's own captions are
3.9:1 on white). Whatever has the keyboard's focus is framed (FOCUS), on slides too.

The launcher (lnlab.ui.server.shell) also puts these rules into the page's HTML (presenter mode's
when the address says `present=1`), so they hold from the first paint, before the app's first
run has sent them: nothing moves when it does.
"""

FOCUS = "#1C95D9"  # 3.3:1 on white, 5.5:1 on Streamlit's dark background (#171614)

BASE_CSS = """
<style>
.lnlab-table-wrap { max-width: 100%; overflow-x: auto; }
.lnlab-table { border-collapse: collapse; font-size: 1rem; font-variant-numeric: tabular-nums; }
.lnlab-table th, .lnlab-table td {
  padding: 0.15rem 0.6rem; text-align: right; border-bottom: 1px solid rgba(128,128,128,0.25);
  white-space: nowrap;
}
.lnlab-table th { font-weight: 600; }
.lnlab-table th.label { font-weight: 400; }
.lnlab-table th:first-child, .lnlab-table td.label { text-align: left; }
.lnlab-table td.pad { opacity: 0.75; }
[data-testid="stCaptionContainer"] { color: inherit !important; opacity: 0.8; }
/* Before the first run, the page is laid out as it will be after it, so nothing moves when it
   arrives (from the page's HTML on, lnlab.ui.server.shell): the main area starts where the sidebar
   will end (Streamlit opens it 300 px wide on screens over 768 px; without this the page
   jumped right, a layout shift of 0.23 at 1366 x 768), and its content is as wide as
   Streamlit's wide layout, which every page asks for (page_setup), makes it. The main area's
   box follows the skip link only while the sidebar is missing (no :has() here: with
   `:not(:has(> sidebar))` every change anywhere in the page restyled the whole page, 4-5 ms
   for one heading's text). */
@media (min-width: 769px) {
  html:not(.lnlab-present) [data-testid="stAppViewContainer"]
    > [data-testid="stSkipToContent"] + div { margin-left: 300px; }
}
div.stMainBlockContainer.block-container { max-width: initial; min-width: auto; }
/* and the content shows once the first run is drawn (lnlab/ui/assets/assist.js); every
   element, since some of Streamlit's set their own visibility */
html.lnlab-loading [data-testid="stMain"], html.lnlab-loading [data-testid="stMain"] *,
html.lnlab-loading [data-testid="stSidebarContent"],
html.lnlab-loading [data-testid="stSidebarContent"] * { visibility: hidden !important; }
/* but not the page's title and first words (lnlab.ui.page.title), which nothing moves */
html.lnlab-loading [data-testid="stMain"] .st-key-lnlab_head,
html.lnlab-loading [data-testid="stMain"] .st-key-lnlab_head * { visibility: visible !important; }
@media (min-width: 864px) {
  div.stMainBlockContainer.block-container { padding-left: 5rem; padding-right: 5rem; }
}
/* what lnlab.ui.assist puts on the page for the assist script takes no room */
[data-testid="stElementContainer"]:has(.lnlab-say),
[data-testid="stElementContainer"]:has(.lnlab-land) { display: none !important; }
.lnlab-sr-only {
  position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px;
  overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0;
}
/* a section's formulas (lnlab.ui.lesson.formulas): MathML (lnlab.teach.mathml), one a line,
   each in pieces that wrap like words */
p.lnlab-formula { margin: 0 0 0.7rem; line-height: 2.2; }  /* wrapped fractions clear */
.lnlab-formula .lnlab-math math { font-size: 1.2em; }
.lnlab-math math { font-size: 1.05em; }
/* a piece KaTeX wrote (static/lnlab/math.mjs) looks like one Python wrote, whatever KaTeX
   stylesheet Streamlit's own formulas bring */
.lnlab-math .katex { font: inherit !important; }
/* a chosen pill (the training lab's variants) in the text's colour, bold, on Streamlit's tint:
   its own red on that tint is 4.47:1 in the light theme and 3.61:1 in the dark one */
button[data-variant="pills"][aria-pressed="true"] { color: inherit !important; font-weight: 600; }
button[data-variant="pills"][aria-pressed="true"] * { color: inherit !important; }
[class*="_pgup"], [class*="_pgdn"] { display: none !important; }
/* how to join a class (lnlab.ui.classroom.teacher.join_card): the code on one line, as big as
   its box allows (11 characters of 0.6 em and 0.08 em apart: 7.5 em), the QR code whole; in
   presenter mode's dialog the QR code leaves room for the rest (and a note on addresses phones
   cannot reach), so the dialog fits 1024 x 768 */
.lnlab-join {
  text-align: center; font-size: 1.25rem; overflow-wrap: anywhere; container-type: inline-size;
}
.lnlab-code {
  font: 700 clamp(1.6rem, calc(100cqi / 7.8), 6rem)/1.15 ui-monospace, monospace;
  letter-spacing: 0.08em; white-space: nowrap;
}
.lnlab-qr-box { display: flex; justify-content: center; }
.lnlab-qr { width: min(100%, 62vh); height: auto; }
[role="dialog"] .lnlab-qr { width: min(100%, 62vh, calc(100vh - 28rem)); min-width: 12rem; }
/* the Class page's lessons, beside the join card: their heading on one line at 1024 px */
[data-testid="stMain"] .st-key-live_lessons h2 { font-size: 1.4rem; }
/* a live question's data (the numbers it is about) on a phone: each part whole on a line */
.lnlab-live-data {
  font-size: 1.1rem; line-height: 1.5; margin: 0 0 0.4rem; padding: 0.4rem 0.7rem;
  border-left: 4px solid currentColor; font-variant-numeric: tabular-nums;
  overflow-wrap: anywhere;
}
.lnlab-live-data span { display: inline-block; margin-right: 0.35rem; }
.st-key-live_options button { min-height: 3.6rem; justify-content: flex-start; }
.st-key-live_options button p { font-size: 1.35rem; text-align: left; }
/* the value a question asks for, until it is answered (lnlab.ui.lesson) */
.lnlab-unknown { display: flex; align-items: center; gap: 0.8rem; margin: 0.2rem 0; }
.lnlab-unknown span {
  font: 700 1.6rem/1 ui-monospace, monospace; border: 2px dashed currentColor;
  border-radius: 0.4rem; padding: 0.25rem 0.7rem;
}
.lnlab-unknown p { margin: 0; }
/* a live class's question on the projector: read from the back of the room */
.lnlab-live-prompt { font-size: 2rem; font-weight: 600; line-height: 1.25; margin: 0.2rem 0; }
.lnlab-live-options { list-style: none; padding: 0; margin: 0.3rem 0; font-size: 1.75rem; }
.lnlab-live-options li { margin: 0.3rem 0; }
.lnlab-live-options b {
  display: inline-block; min-width: 2.4rem; text-align: center; margin-right: 0.8rem;
  border: 2px solid currentColor; border-radius: 50%;
}
.lnlab-live-count { font-size: 1.6rem; margin: 0; }
.lnlab-copy button { font: inherit; padding: 0.4rem 0.8rem; border-radius: 0.5rem;
  border: 1px solid rgba(128,128,128,0.5); background: transparent; cursor: pointer; }
.lnlab-copy span { margin-left: 0.6rem; }
@media (max-width: 640px) {  /* phones: every choice a tap target of 44 px or more */
  [role="radiogroup"] label { min-height: 44px; align-items: center; }
}
/* a slider's invisible range input sits at its thumb and runs past a phone's edge */
[data-testid="stSlider"] input[type="range"] { max-width: 1.5rem; }
/* headings: h2 for a page's parts (after its h1), drawn at Streamlit's h3 size */
[data-testid="stMain"] h2 { font-size: 1.75rem; }
:focus-visible, button:focus-visible, [data-testid="stExpander"] summary:focus-visible {
  outline: 3px solid __FOCUS__ !important; outline-offset: 2px;
}
</style>
""".replace("__FOCUS__", FOCUS)

PRESENTER_CSS = """
<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stHeader"], [data-testid="stToolbar"] { display: none !important; }
.stMainBlockContainer { padding: 0.6rem 1.5rem 0.4rem !important; max-width: 100% !important; }
[data-testid="stVerticalBlock"] { gap: 0.45rem; }
.stMarkdown p, .stMarkdown li { font-size: 1.3rem; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { font-size: 1rem; }
.stMarkdown h1, h1 { font-size: 2rem !important; padding: 0.2rem 0 !important; }
.stMarkdown h2, h2 { font-size: 1.45rem !important; padding: 0.1rem 0 !important; }
.stMarkdown h3, h3 { font-size: 1.3rem !important; padding: 0.1rem 0 !important; }
.katex { font-size: 1.25em !important; }
.lnlab-formula { font-size: 1.3rem; }
p.lnlab-formula { line-height: 1.6; margin-bottom: 0.4rem; }
[data-testid="stMetricValue"] { font-size: 2rem; }
[data-testid="stMetricLabel"] p { font-size: 1.1rem; }
[data-testid="stWidgetLabel"] p { font-size: 1.1rem; }
[data-testid="stRadio"] label p, [data-testid="stSliderThumbValue"],
[data-testid="stSliderTickBar"], [data-testid="stSliderTickBar"] *,
[data-baseweb="select"] div, [data-testid="stNumberInput"] input,
[data-testid="stTextInput"] input, [role="radiogroup"] p { font-size: 1rem !important; }
button p, button div, [data-testid="stPageLink"] p { font-size: 1.1rem !important; }
[data-testid="stAlertContentInfo"] p, [data-testid="stAlertContentWarning"] p,
[data-testid="stAlertContentSuccess"] p { font-size: 1.1rem; }
</style>
"""
