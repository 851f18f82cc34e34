#include "widgets/elided_label.h"

#include <QEvent>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextDocumentFragment>

#include <algorithm>

namespace kerncast {

ElidedLabel::ElidedLabel(QWidget* parent, Qt::TextElideMode mode) : QLabel(parent), m_mode(mode) { setWordWrap(false); }

ElidedLabel::~ElidedLabel() = default;

void ElidedLabel::setText(const QString& text) {
    m_text = text;
    m_fullWidth = widthFor(text);
    updateGeometry();
    elide();
}

void ElidedLabel::clear() { setText(QString()); }

int ElidedLabel::widthFor(const QString& text) const {
    if (!m_probe)
        m_probe = std::make_unique<QLabel>();
    m_probe->setFont(font());
    m_probe->setMargin(margin());
    m_probe->setIndent(indent());
    m_probe->setTextFormat(textFormat());
    m_probe->setText(text);
    return m_probe->sizeHint().width() + (width() - contentsRect().width());  // and this label's frame
}

QSize ElidedLabel::sizeHint() const { return {m_fullWidth, QLabel::sizeHint().height()}; }

QSize ElidedLabel::minimumSizeHint() const {
    const int few = fontMetrics().horizontalAdvance(QStringLiteral("#00 …")) + 2 * margin();
    return {std::min(m_fullWidth, few), QLabel::minimumSizeHint().height()};
}

QString ElidedLabel::elidedRichText(int available) const {
    // The longest start of the text (formatting kept) that fits with "…" after it.
    QTextDocument whole;
    whole.setHtml(m_text);
    const int length = static_cast<int>(whole.toPlainText().size());
    const auto cut = [&](int keep) {
        QTextDocument doc;
        doc.setHtml(m_text);
        QTextCursor cursor(&doc);
        cursor.setPosition(keep);
        cursor.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
        cursor.removeSelectedText();
        cursor.insertText(QStringLiteral("…"));
        return QTextDocumentFragment(&doc).toHtml();
    };
    int lo = 0, hi = length;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (widthFor(cut(mid)) <= available)
            lo = mid;
        else
            hi = mid - 1;
    }
    return cut(lo);
}

void ElidedLabel::elide() {
    m_elided = !m_text.isEmpty() && m_fullWidth > width();
    QString shown = m_text;
    if (m_elided) {
        const bool rich = textFormat() == Qt::RichText || (textFormat() == Qt::AutoText && Qt::mightBeRichText(m_text));
        shown = rich ? elidedRichText(width())
                     : fontMetrics().elidedText(m_text, m_mode, std::max(0, contentsRect().width() - 2 * margin()));
    }
    if (QLabel::text() != shown)
        QLabel::setText(shown);
    setToolTip(m_elided ? m_text : QString());
}

void ElidedLabel::resizeEvent(QResizeEvent* event) {
    QLabel::resizeEvent(event);
    elide();
}

void ElidedLabel::changeEvent(QEvent* event) {
    QLabel::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) {
        m_fullWidth = widthFor(m_text);
        updateGeometry();
        elide();
    }
}

}  // namespace kerncast
