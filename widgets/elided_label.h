#pragma once
// A one-line label that never widens its dock and never cuts its text silently: while the text fits it is shown as
// given (rich text too), and where space ends it is shortened with "…" (rich text keeps its formatting) and the
// whole text becomes its tool tip.

#include <QLabel>

#include <memory>

namespace kerncast {

class ElidedLabel : public QLabel {
    Q_OBJECT
public:
    explicit ElidedLabel(QWidget* parent = nullptr, Qt::TextElideMode mode = Qt::ElideRight);
    ~ElidedLabel() override;

    // These hide QLabel's: text() is always the whole text, what QLabel shows may be shortened.
    void setText(const QString& text);
    QString text() const { return m_text; }
    void clear();

    // Whether the text is shortened at the current width, and what is shown.
    bool isElided() const { return m_elided; }
    QString displayedText() const { return QLabel::text(); }

    // The width of the whole text; the minimum is a few characters, so a long title never decides a dock's width.
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    // The width QLabel would ask for to show `text` whole.
    int widthFor(const QString& text) const;
    QString elidedRichText(int available) const;
    void elide();

    Qt::TextElideMode m_mode;
    QString m_text;
    int m_fullWidth = 0;
    bool m_elided = false;
    mutable std::unique_ptr<QLabel> m_probe;  // measures candidate texts as this label would lay them out
};

}  // namespace kerncast
