"""The app's CSS: every page, and presenter mode on top.

Presenter mode is sized for a projector at 1024 x 768: no sidebar or header, body text about
21 px, tables 18 px, captions 16 px, and compact spacing so one slide fits one screen. The
arrow and page keys move between slides, so buttons draw no focus frame there.
"""

BASE_CSS = """
<style>
.lnlab-table-wrap { max-width: 100%; overflow-x: auto; }
.lnlab-table { border-collapse: collapse; font-size: 1rem; font-variant-numeric: tabular-nums; }
.lnlab-table th, .lnlab-table td {
  padding: 0.15rem 0.6rem; text-align: right; border-bottom: 1px solid rgba(128,128,128,0.25);
  white-space: nowrap;
}
.lnlab-table th { font-weight: 600; }
.lnlab-table th:first-child, .lnlab-table td.label { text-align: left; }
.lnlab-table td.pad { color: #888; }
.lnlab-formula p { line-height: 2.4; margin-bottom: 0.2rem; }
/* a formula with fractions under one whose fractions have subscripts (x_i / sigma_eps): the
   upper denominator clears the lower numerator */
[data-testid="stElementContainer"]:has(.lnlab-formula .mfrac .msupsub)
  + [data-testid="stElementContainer"]:has(.lnlab-formula .mfrac) { margin-top: 0.9rem; }
[class*="_pgup"], [class*="_pgdn"] { display: none !important; }
.lnlab-join { text-align: center; font-size: 1.25rem; overflow-wrap: anywhere; }
.lnlab-code {
  font: 700 clamp(2.4rem, 11vw, 6rem)/1.15 ui-monospace, monospace; letter-spacing: 0.08em;
}
.lnlab-qr-box { display: flex; justify-content: center; }
.lnlab-qr { width: min(100%, 62vh); height: auto; }
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
</style>
"""

PRESENTER_CSS = """
<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stHeader"], [data-testid="stToolbar"] { display: none !important; }
.stMainBlockContainer { padding: 0.6rem 1.5rem 0.4rem !important; max-width: 100% !important; }
[data-testid="stVerticalBlock"] { gap: 0.45rem; }
.stMarkdown p, .stMarkdown li { font-size: 1.3rem; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { font-size: 1rem; }
.stMarkdown h1, h1 { font-size: 2rem !important; padding: 0.2rem 0 !important; }
.stMarkdown h2, h2 { font-size: 1.7rem !important; padding: 0.1rem 0 !important; }
.stMarkdown h3, h3 { font-size: 1.45rem !important; padding: 0.1rem 0 !important; }
.katex { font-size: 1.25em !important; }
.lnlab-table { font-size: 1.15rem; }
[data-testid="stMetricValue"] { font-size: 2rem; }
[data-testid="stMetricLabel"] p { font-size: 1.1rem; }
[data-testid="stWidgetLabel"] p { font-size: 1.1rem; }
[data-testid="stRadio"] label p, [data-testid="stSliderThumbValue"],
[data-testid="stSliderTickBar"], [data-testid="stSliderTickBar"] *,
[data-baseweb="select"] div, [data-testid="stNumberInput"] input,
[data-testid="stTextInput"] input, [role="radiogroup"] p { font-size: 1rem !important; }
button p, button div { font-size: 1.1rem !important; }
button:focus, button:focus-visible { outline: none !important; box-shadow: none !important; }
[data-testid="stAlertContentInfo"] p, [data-testid="stAlertContentWarning"] p,
[data-testid="stAlertContentSuccess"] p { font-size: 1.1rem; }
</style>
"""
